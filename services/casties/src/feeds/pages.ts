import type { Collection, Filter } from '@castie/platform';
import type { CastieView, DayDoc } from '../read-model/projection.ts';

export type FeedOrder = 'created' | 'activity';

export interface Page {
  views: CastieView[];
  hasMore: boolean;
  /** Cursor of the next page (`<instant>|<uuid>` of the last Castie shown), null at the end. */
  nextBefore: string | null;
}

const fields = { created: { day: 'createdDay', at: 'createdAt' }, activity: { day: 'activityDay', at: 'activityAt' } } as const;

function parseCursor(before: string | undefined): { at: string; id: string } | null {
  if (!before) return null;
  const bar = before.lastIndexOf('|');
  if (bar <= 0) return null;
  return { at: before.slice(0, bar), id: before.slice(bar + 1) };
}

/**
 * One bounded page of Casties, newest first by creation or by latest forecast, matching `filter`.
 * The embedded document store has hash indexes only, so instead of sorting every Castie the page
 * walks day buckets newest first (`castie_days` lists the days that have any), asking each day
 * through its index (intersected with the filter's indexed fields, e.g. groupSlug) and sorting
 * only that day's Casties, until the page is full. A page costs a few indexed lookups whatever
 * the number of Casties; MongoDB answers the same queries from its indexes.
 */
export async function feedPage(views: Collection<CastieView>, days: Collection<DayDoc>, order: FeedOrder, filter: Filter, limit: number, before?: string): Promise<Page> {
  const { day: dayField, at: atField } = fields[order];
  const cursor = parseCursor(before);
  const cursorDay = cursor?.at.slice(0, 10);
  const dayList = (await days.find({ kind: order })).map((d) => d.day).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const out: CastieView[] = [];
  const seen = new Set<string>();
  for (const day of dayList) {
    if (cursorDay && day > cursorDay) continue;
    const need = limit + 1 - out.length;
    const clauses: Filter[] = [filter, { [dayField]: day }];
    if (cursor && day === cursorDay) clauses.push({ $or: [{ [atField]: { $lt: cursor.at } }, { [atField]: cursor.at, _id: { $lt: cursor.id } }] });
    const found = await views.find({ $and: clauses }, { sort: { [atField]: -1, _id: -1 }, limit: need });
    // A Castie whose activity moved to a later day while paging is shown once.
    for (const v of found) {
      if (seen.has(v._id)) continue;
      seen.add(v._id);
      out.push(v);
    }
    if (out.length > limit) break;
  }
  const hasMore = out.length > limit;
  const page = out.slice(0, limit);
  const last = page.at(-1);
  return { views: page, hasMore, nextBefore: hasMore && last ? `${last[atField]}|${last._id}` : null };
}
