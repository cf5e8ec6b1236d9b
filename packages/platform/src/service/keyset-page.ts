import { DomainError } from '@castie/contracts';
import type { Collection, Doc, Filter, Scalar } from '../ports/document-store.ts';

/** What a client asked of a list: absent both, the list answers whole (as the spec shows it). */
export interface PageRequest {
  limit?: number | undefined;
  before?: string | undefined;
}

/** One page of a list and where the next one starts (`null` on the last page). */
export interface KeysetPage<T> {
  items: T[];
  hasMore: boolean;
  nextBefore: string | null;
}

/** Page size when a client sends `before` without `limit`. */
export const listPageDefault = 100;

/** True when a request asks for pages (a `limit` or a `before`). */
export const wantsPage = (req: PageRequest): boolean => req.limit !== undefined || req.before !== undefined;

/**
 * Splits a `before` cursor, `<key>|<id>` of the last item of the previous page. `parse` turns the
 * key's text back into its value and throws (400 missing_request_data) when the text cannot be one.
 */
export function cursorParts(before: string, parse: (key: string) => Scalar = (k) => k): { key: Scalar; id: string } {
  const bar = before.lastIndexOf('|');
  const bad = () => new DomainError('missing_request_data', 'before must be the next_before of a previous page');
  if (bar < 0 || bar === before.length - 1) throw bad();
  let key: Scalar;
  try {
    key = parse(before.slice(0, bar));
  } catch {
    throw bad();
  }
  return { key, id: before.slice(bar + 1) };
}

/** Parses the key of a cursor over a number field (XP, counts). */
export const numericKey = (text: string): number => {
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error('not a number');
  return Number(text);
};

export interface KeysetPageOptions<T extends Doc> {
  /** The list's documents (an equality prefix of the index that serves the page). */
  filter: Filter<T>;
  /** The order field; `_id` breaks ties in the same direction, so the order is total. */
  key: keyof T & string;
  direction: 1 | -1;
  /** A unique field breaking ties of `key` (default `_id`); the cursor's second part. */
  tie?: keyof T & string;
  parseKey?: (key: string) => Scalar;
  /**
   * Drops documents the caller must not see (hidden, inactive): pages keep walking the index until
   * they have `limit` shown documents or the range ends, so a page is never short while more exist.
   */
  keep?: (docs: T[]) => Promise<T[]> | T[];
}

/**
 * One page of a list read as an index range + limit in (key, _id) order: the documents strictly
 * after the cursor, `limit + 1` at a time, so an item added at the head of the list (a newer key)
 * never shifts a later page. The compound index (filter fields, key, _id) must be declared with
 * the collection.
 */
export async function keysetPage<T extends Doc>(collection: Collection<T>, req: PageRequest, options: KeysetPageOptions<T>): Promise<KeysetPage<T>> {
  const limit = req.limit ?? listPageDefault;
  const { key, direction } = options;
  const tie = options.tie ?? '_id';
  const op = direction === -1 ? '$lt' : '$gt';
  let cursor = req.before === undefined ? null : cursorParts(req.before, options.parseKey);
  const shown: T[] = [];
  for (;;) {
    const after = cursor ? ({ $or: [{ [key]: { [op]: cursor.key } }, { [key]: cursor.key, [tie]: { [op]: cursor.id } }] } as unknown as Filter<T>) : null;
    const base = options.filter as Filter<T> & { $and?: Filter<T>[] };
    const filter = (after ? { ...base, $and: [...(base.$and ?? []), after] } : base) as Filter<T>;
    const sort = (tie === '_id' ? { [key]: direction, _id: direction } : { [key]: direction, [tie]: direction, _id: direction }) as never;
    const want = limit + 1 - shown.length;
    const batch = await collection.find(filter, { sort, limit: want });
    shown.push(...(options.keep ? await options.keep(batch) : batch));
    const last = batch.at(-1);
    // Enough shown to know another page exists, or the index range ran out.
    if (shown.length > limit || batch.length < want || !last) break;
    cursor = { key: last[key] as Scalar, id: String(last[tie]) };
  }
  const items = shown.slice(0, limit);
  const hasMore = shown.length > limit;
  const end = items.at(-1);
  return { items, hasMore, nextBefore: hasMore && end ? `${String(end[key])}|${String(end[tie])}` : null };
}

/** Parses the key of a cursor over an ISO instant field (postedAt, createdAt). */
export const instantKey = (text: string): string => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(text)) throw new Error('not an instant');
  return text;
};
