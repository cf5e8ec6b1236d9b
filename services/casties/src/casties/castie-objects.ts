import { apiDate, apiTime, castieAnswerable, castieChangesByTimeAt, castieEnded, type CastieObject, type DetailedCastie, type ForecastObject, type ForecastOption, type UserForecast } from '@castie/contracts';
import { RawJson, type Clock, type Collection } from '@castie/platform';
import type { People, PersonDoc } from '@castie/reference';
import { commentCounts, type CommentCountDoc } from '../comments/read-model.ts';
import { forecastDocId, frodadsWhoForecast, type ForecasterDoc, type ForecastDoc, type RosterDoc } from '../forecasting/read-model.ts';
import { writeInMatches } from './decider.ts';
import type { CastieView } from './read-model.ts';

const round1 = (n: number): number => Math.round(n * 10) / 10;

/**
 * Date and time of an instant in the service time zone. Formatting through Intl is the costliest
 * step of a feed page (four per Castie), and the instants repeat, so they are remembered (bounded).
 */
const formatted = new Map<string, { date: string; time: string }>();
function dateTime(instant: string, timeZone: string): { date: string; time: string } {
  const key = `${timeZone}|${instant}`;
  let found = formatted.get(key);
  if (!found) {
    if (formatted.size >= 100_000) formatted.clear();
    formatted.set(key, (found = { date: apiDate(instant, timeZone), time: apiTime(instant, timeZone) }));
  }
  return found;
}

/** The creator's handle as a viewer sees it: a creator who chose not to show it is shown to nobody but themselves. */
const submitterFor = (view: CastieView, creator: PersonDoc | undefined, requesterId: string): string => (view.showUsername || view.creatorId === requesterId ? (creator?.handle ?? '') : '');

/** Whether a frodad's forecasts are shown: a private person's are theirs alone, friends included (spec: Authentication). */
const forecastsShown = (person: PersonDoc | undefined): person is PersonDoc => person !== undefined && !person.isPrivate;

/** A viewer's forecast as the API's userForecast. */
function userForecast(mine: ForecastDoc): UserForecast {
  return { forecast_text: mine.text, forecast_id: mine.forecastId, is_correct: mine.correct === true, ...(mine.answerId !== null ? { answer_id: mine.answerId } : {}) };
}

/**
 * JSON of a read-model document, made once per version of it: a document the store's cache hands
 * out is the same frozen object until a commit changes it (as views are, see CastieObjects), so a
 * WeakMap on it is invalidated by that commit and bounded by the cache. Unfrozen documents (a
 * store that hands out copies) are serialized every time.
 */
function jsonPerVersion<D extends object>(serialize: (doc: D) => unknown): (doc: D) => string {
  const made = new WeakMap<D, string>();
  return (doc) => {
    let json = made.get(doc);
    if (json === undefined) {
      json = JSON.stringify(serialize(doc));
      if (Object.isFrozen(doc)) made.set(doc, json);
    }
    return json;
  };
}

/** userForecast as JSON. */
const userForecastJson = jsonPerVersion(userForecast);

/**
 * A person's profile picture as JSON: a page names a frodad's picture on every Castie they
 * forecast. Writing it anew each time, joined with `+=`, was most of what `list` itself allocated:
 * with the page in pieces (see RawJson), that fell from 163 to 85 KB a home page (sampled).
 */
const picJson = jsonPerVersion((person: PersonDoc) => person.profPic ?? '');

/** The members of a Castie object that are the same for every viewer, serialized (see `shared`). */
interface Fragment {
  /** The object's key and its opening members: `"<uuid>":{"uuid":…,"question":…,…,"forecasts":[…]`. */
  opening: string;
  /** The forecasts array alone (search repeats it as forecast_options). */
  forecasts: string;
}

/**
 * Turns read-model documents into the API's Castie objects for one requester: the parts that
 * depend on the requester (their forecast, their friends' forecasts) are fetched for a whole page
 * at once, in a fixed number of indexed queries.
 *
 * The other parts (question, options with percentages, dates, counts) depend on the view alone,
 * so their JSON is made once per version of a view and joined with the per-viewer parts. A view
 * read from the store's document cache is the same frozen object until a commit changes it, so
 * a WeakMap on it is invalidated by the projection's commit, and bounded by the cache. (A store
 * that hands out copies, such as MongoDB, just misses every time.)
 */
export class CastieObjects {
  readonly #fragments = new WeakMap<CastieView, Fragment>();

  constructor(
    private readonly deps: {
      views: Collection<CastieView>;
      forecasts: Collection<ForecastDoc>;
      rosters: Collection<RosterDoc>;
      forecasters: Collection<ForecasterDoc>;
      commentCounts: Collection<CommentCountDoc>;
      people: People;
      timeZone: string;
      clock: Clock;
    },
  ) {}

  /** The forecast options with their percentages; `is_correct` only on the correct one once answered. */
  options(view: CastieView): ForecastOption[] {
    const total = view.forecastsCount;
    const pct = (n: number) => (total > 0 ? round1((n / total) * 100) : 0);
    if (!view.allowWriteIn) {
      return view.options.map((o) => ({
        answer_id: o.answerId,
        answer_text: o.text,
        percentage: pct(view.counts[String(o.answerId)] ?? 0),
        ...(view.answered && view.correctAnswerId === o.answerId ? { is_correct: true as const } : {}),
      }));
    }
    return Object.entries(view.writeIns)
      .map(([key, n]) => ({ text: view.writeInTexts[key] ?? '', n }))
      .sort((a, b) => b.n - a.n || a.text.localeCompare(b.text))
      .map((w) => ({
        answer_text: w.text,
        percentage: pct(w.n),
        ...(view.answered && view.correctText !== null && writeInMatches(w.text, view.correctText) ? { is_correct: true as const } : {}),
      }));
  }

  /** The members that depend on the view alone. */
  private shared(view: CastieView) {
    const tz = this.deps.timeZone;
    const createdAt = view.createdAt ?? view.lastForecastAt ?? '';
    const last = dateTime(view.lastForecastAt ?? createdAt, tz);
    const created = dateTime(createdAt, tz);
    return {
      uuid: view._id,
      question: view.question,
      groupSlug: view.groupSlug,
      showUsername: view.showUsername,
      createdAtDate: created.date,
      createdAtTime: created.time,
      lastForecastedDate: last.date,
      lastForecastedTime: last.time,
      allowWriteIn: view.allowWriteIn,
      setAnswered: !view.allowWriteIn,
      openEnded: view.endsAt === null,
      endDate: view.endDate,
      endTime: view.endTime,
      answerSubmitted: view.answered,
      correctIndex: view.answered ? view.correctText : null,
      forecastsCount: view.forecastsCount,
      forecasts: this.options(view),
    };
  }

  private fragment(view: CastieView): Fragment {
    let found = this.#fragments.get(view);
    if (!found) {
      const { forecasts, ...rest } = this.shared(view);
      const forecastsJson = JSON.stringify(forecasts);
      found = { opening: `${JSON.stringify(view._id)}:{${JSON.stringify(rest).slice(1, -1)},"forecasts":${forecastsJson}`, forecasts: forecastsJson };
      // Only frozen views are the same object until they change (see the class comment).
      if (Object.isFrozen(view)) this.#fragments.set(view, found);
    }
    return found;
  }

  /** The members that depend on the requester, the time, the creator's person and other read models. */
  private personal(requesterId: string, view: CastieView, submitter: PersonDoc | undefined, mine: ForecastDoc | undefined, friendCount: number, comments: number, now: Date) {
    return {
      submitter: submitterFor(view, submitter, requesterId),
      ...(mine ? { userForecast: userForecast(mine) } : {}),
      is_answerable: castieAnswerable(view, now),
      friendCount,
      commentsCount: comments,
    };
  }

  /**
   * Castie objects (home, group, search) indexed by uuid, in the order given. `validUntil` is
   * told the first instant at which time alone changes them (a Castie's end: is_answerable).
   */
  async list(requesterId: string, views: readonly CastieView[], options: { forecastOptions?: boolean; validUntil?: (instant: number) => void } = {}): Promise<RawJson<Record<string, CastieObject>>> {
    if (views.length === 0) return new RawJson('{}');
    const now = this.deps.clock.now();
    if (options.validUntil) {
      for (const view of views) {
        const changes = castieChangesByTimeAt(view, now);
        if (changes !== null) options.validUntil(changes);
      }
    }
    const ids = views.map((v) => v._id);
    const { people } = this.deps;
    const friendIds = await people.friendIds(requesterId);
    // Which frodads forecast which Casties of the page: rosters, not every forecast of the page.
    const [mine, friendsOnPage, comments] = await Promise.all([
      this.deps.forecasts.byIds(ids.map((id) => forecastDocId(id, requesterId))),
      frodadsWhoForecast(this.deps, ids, friendIds),
      commentCounts(this.deps.commentCounts, ids),
    ]);
    // Only the people the page shows: its creators and the frodads who forecast on it, or, when
    // the page names frodads more often than there are frodads, simply all of them.
    const shownIds = new Set<string>();
    for (const view of views) shownIds.add(view.creatorId);
    let named = 0;
    for (const forecasters of friendsOnPage.values()) named += forecasters.length;
    if (named > friendIds.length) for (const id of friendIds) shownIds.add(id);
    else for (const forecasters of friendsOnPage.values()) for (const id of forecasters) shownIds.add(id);
    const persons = await people.activeByIds([...shownIds]);
    const mineBy = new Map<string, ForecastDoc>();
    for (const f of mine.values()) mineBy.set(f.castieId, f);
    // The per-viewer members, written as JSON directly (the members and order `personal` gives),
    // in pieces the response joins once (see RawJson): the shared fragments are not copied here.
    const out = ['{'];
    const pics: string[] = [];
    // Each frodad's picture as JSON (null: not shown), found once per page however many of its
    // Casties they forecast (a page names thousands of frodads' forecasts, a few hundred frodads).
    const picOf = new Map<string, string | null>();
    const seen = new Set<string>();
    for (const view of views) {
      if (seen.has(view._id)) continue;
      seen.add(view._id);
      pics.length = 0;
      for (const id of friendsOnPage.get(view._id) ?? []) {
        let pic = picOf.get(id);
        if (pic === undefined) {
          const friend = persons.get(id);
          picOf.set(id, (pic = forecastsShown(friend) ? picJson(friend) : null));
        }
        if (pic !== null) pics.push(pic);
      }
      const submitter = submitterFor(view, persons.get(view.creatorId), requesterId);
      const own = mineBy.get(view._id);
      const fragment = this.fragment(view);
      if (seen.size > 1) out.push(',');
      out.push(fragment.opening, ',"submitter":', submitter === '' ? '""' : JSON.stringify(submitter));
      if (own) out.push(',"userForecast":', userForecastJson(own));
      out.push(`,"is_answerable":${castieAnswerable(view, now)},"friendCount":${pics.length},"commentsCount":${comments.get(view._id) ?? 0},"friendPics":[`, pics.join(','), ']');
      if (options.forecastOptions) out.push(',"forecast_options":', fragment.forecasts);
      out.push('}');
    }
    out.push('}');
    return new RawJson(out);
  }

  /** The detailed Castie object: friendForecasts by forecast id instead of friendPics. */
  async detailed(requesterId: string, view: CastieView): Promise<DetailedCastie> {
    const now = this.deps.clock.now();
    const { people } = this.deps;
    const friendIds = await people.friendIds(requesterId);
    const [mine, friendsOnIt, persons, comments] = await Promise.all([
      this.deps.forecasts.findOne({ _id: forecastDocId(view._id, requesterId) }),
      frodadsWhoForecast(this.deps, [view._id], friendIds),
      people.activeByIds([view.creatorId, ...friendIds]),
      commentCounts(this.deps.commentCounts, [view._id]),
    ]);
    const forecasters = friendsOnIt.get(view._id) ?? [];
    const friendForecasts = forecasters.length === 0 ? [] : await this.deps.forecasts.find({ _id: { $in: forecasters.map((id) => forecastDocId(view._id, id)) } });
    const ended = castieEnded(view, now);
    const friendly = friendForecasts.filter((f) => forecastsShown(persons.get(f.userId)));
    const friendMap: DetailedCastie['friendForecasts'] = {};
    for (const f of friendly) {
      friendMap[String(f.forecastId)] = {
        handle: persons.get(f.userId)!.handle,
        forecast_text: f.text,
        ...(f.answerId !== null ? { answer_id: f.answerId } : {}),
        ...(ended && f.correct === true ? { is_correct: true as const } : {}),
      };
    }
    return { ...this.shared(view), ...this.personal(requesterId, view, persons.get(view.creatorId), mine ?? undefined, friendly.length, comments.get(view._id) ?? 0, now), friendForecasts: friendMap };
  }

  /** Forecast objects (profile stats, group accuracy) indexed by forecast id, newest first. */
  async forecastObjects(forecasts: readonly ForecastDoc[]): Promise<Record<string, ForecastObject>> {
    if (forecasts.length === 0) return {};
    const now = this.deps.clock.now();
    const views = await this.deps.views.byIds(forecasts.map((f) => f.castieId));
    const out: Record<string, ForecastObject> = {};
    for (const f of [...forecasts].sort((a, b) => (a.placedAt < b.placedAt ? 1 : -1))) {
      const view = views.get(f.castieId);
      if (!view) continue;
      const ended = castieEnded(view, now);
      out[String(f.forecastId)] = {
        question: view.question,
        uuid: view._id,
        forecast: f.text,
        is_active: !ended,
        endDate: view.endDate,
        endTime: view.endTime,
        ...(ended ? { answerSubmitted: view.answered, is_correct: f.correct === true } : {}),
        points_earned: f.points,
      };
    }
    return out;
  }
}
