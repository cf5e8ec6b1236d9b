import { CASTIES_TOPIC, castieRules, type CastieEvent } from '@castie/contracts';
import { updateOnce, type DocumentStore, type Projection } from '@castie/platform';
import { GROUP_SCORES } from '@castie/reference';
import { createHash } from 'node:crypto';

/**
 * The casties service's own read models (rule 2), fed by its topic:
 * - `castie_views`: one document per Castie with everything a Castie object shows except what
 *   depends on the requester (their forecast, their friends), plus the keys feeds and search use;
 * - `castie_forecasts`: one per forecast (by Castie, by user), scored once answered;
 * - `castie_comments`: comments with their reporters;
 * - `castie_days`: which days have Casties created / active, so feeds walk day buckets newest
 *   first through hash indexes instead of sorting every Castie (see feeds/pages.ts).
 */
export interface CastieView {
  _id: string;
  groupSlug: string;
  creatorId: string;
  question: string;
  showUsername: boolean;
  allowWriteIn: boolean;
  options: { answerId: number; text: string }[];
  /** Forecasts per answer id (set options). */
  counts: Record<string, number>;
  /** Write-in forecasts grouped by their trimmed lower-case text (keyed by a hash of it). */
  writeIns: Record<string, { text: string; n: number }>;
  forecastsCount: number;
  commentsCount: number;
  createdAt: string;
  createdDay: string;
  lastForecastAt: string | null;
  /** Latest forecast, or creation while nobody has forecast: the order of following and spicy. */
  activityAt: string;
  activityDay: string;
  endsAt: string | null;
  endDate: string | null;
  endTime: string | null;
  answered: boolean;
  correctAnswerId: number | null;
  correctText: string | null;
  reports: number;
  [key: string]: unknown;
}

export interface ForecastDoc {
  _id: string;
  castieId: string;
  groupSlug: string;
  userId: string;
  forecastId: number;
  answerId: number | null;
  text: string;
  placedAt: string;
  /** null until the Castie is answered. */
  correct: boolean | null;
  points: number;
  [key: string]: unknown;
}

export interface CommentDoc {
  _id: string;
  castieId: string;
  userId: string;
  text: string;
  postedAt: string;
  deleted: boolean;
  reporters: string[];
  [key: string]: unknown;
}

/** The search index of one Castie, apart from its view so that feeds never carry (or clone) it. */
export interface SearchDoc {
  _id: string;
  /** Prefixes of the question's words. */
  terms: string[];
  groupSlug: string;
  createdAt: string;
  [key: string]: unknown;
}

export interface DayDoc {
  _id: string;
  kind: 'created' | 'activity';
  day: string;
  [key: string]: unknown;
}

export const VIEWS = 'castie_views';
export const FORECASTS = 'castie_forecasts';
export const COMMENTS = 'castie_comments';
export const DAYS = 'castie_days';
export const SEARCH = 'castie_search';
/** Every collection this projection owns (the rebuild test drops exactly these). */
export const CASTIES_COLLECTIONS = [VIEWS, FORECASTS, COMMENTS, DAYS, SEARCH] as const;

export const dayOf = (instant: string): string => instant.slice(0, 10);
export const forecastDocId = (castieId: string, userId: string): string => `${castieId}:${userId}`;
export const writeInKey = (text: string): string => createHash('sha1').update(text.trim().toLowerCase()).digest('hex').slice(0, 16);

/** Lower-case words of a text (letters and digits of any script). */
export const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const TERM_MIN = 2;
const TERM_MAX = 16;
/** Every prefix (2 to 16 characters) of every word: a query word matches words it begins. */
export function termsOf(text: string): string[] {
  const terms = new Set<string>();
  for (const word of wordsOf(text)) for (let n = TERM_MIN; n <= Math.min(word.length, TERM_MAX); n++) terms.add(word.slice(0, n));
  return [...terms];
}
/** The search keys of a query: its words, cut to the longest indexed prefix; short words are ignored. */
export const queryTerms = (q: string): string[] => [...new Set(wordsOf(q).filter((w) => w.length >= TERM_MIN).map((w) => w.slice(0, TERM_MAX)))];

const viewSeed = (skip: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries({
      counts: {},
      writeIns: {},
      forecastsCount: 0,
      commentsCount: 0,
      lastForecastAt: null,
      answered: false,
      correctAnswerId: null,
      correctText: null,
      reports: 0,
    }).filter(([k]) => !skip.includes(k)),
  );

export function castiesProjection(store: DocumentStore): Projection {
  const views = store.collection<CastieView>(VIEWS);
  const forecasts = store.collection<ForecastDoc>(FORECASTS);
  const comments = store.collection<CommentDoc>(COMMENTS);
  const days = store.collection<DayDoc>(DAYS);
  const search = store.collection<SearchDoc>(SEARCH);
  const markDay = (kind: DayDoc['kind'], day: string) => days.replaceOne({ _id: `${kind}:${day}` }, { _id: `${kind}:${day}`, kind, day }, { upsert: true });

  return {
    name: 'casties',
    topics: [CASTIES_TOPIC],
    async setup() {
      await views.createIndex({ groupSlug: 1 });
      await views.createIndex({ creatorId: 1 });
      await views.createIndex({ createdDay: 1 });
      await views.createIndex({ activityDay: 1 });
      await search.createIndex({ terms: 1 });
      await forecasts.createIndex({ castieId: 1 });
      await forecasts.createIndex({ userId: 1 });
      await comments.createIndex({ castieId: 1 });
      await comments.createIndex({ userId: 1 });
      await days.createIndex({ kind: 1 });
      // Group pages rank a group's scores: the shared group read model indexes them by user only.
      await store.collection(GROUP_SCORES).createIndex({ slug: 1 });
    },
    async apply(event, _envelope, record) {
      const e = event as CastieEvent;
      switch (e.type) {
        case 'CastieCreated': {
          const d = e.data;
          const existing = await views.findOne({ _id: d.castieId }, { projection: { activityAt: 1 } });
          // A forecast seen first (another partition) keeps the later activity.
          const activityAt = existing?.activityAt && existing.activityAt > d.createdAt ? existing.activityAt : d.createdAt;
          const fields = {
            groupSlug: d.groupSlug,
            creatorId: d.creatorId,
            question: d.question,
            showUsername: d.showUsername,
            allowWriteIn: d.allowWriteIn,
            options: d.options,
            createdAt: d.createdAt,
            createdDay: dayOf(d.createdAt),
            activityAt,
            activityDay: dayOf(activityAt),
            endsAt: d.endsAt,
            endDate: d.endDate,
            endTime: d.endTime,
          };
          await updateOnce(views, d.castieId, record, { $set: fields, $setOnInsert: viewSeed(Object.keys(fields)) });
          await search.replaceOne({ _id: d.castieId }, { _id: d.castieId, terms: termsOf(d.question), groupSlug: d.groupSlug, createdAt: d.createdAt }, { upsert: true });
          await markDay('created', fields.createdDay);
          await markDay('activity', fields.activityDay);
          return;
        }
        case 'ForecastPlaced': {
          const d = e.data;
          await updateOnce(
            forecasts,
            forecastDocId(d.castieId, d.userId),
            record,
            { $set: { castieId: d.castieId, groupSlug: d.groupSlug, userId: d.userId, forecastId: d.forecastId, answerId: d.answerId, text: d.text, placedAt: d.placedAt }, $setOnInsert: { correct: null, points: 0 } },
          );
          const view = await views.findOne({ _id: d.castieId }, { projection: { activityAt: 1 } });
          const later = !view?.activityAt || d.placedAt >= view.activityAt;
          const inc: Record<string, number> = { forecastsCount: 1 };
          const set: Record<string, unknown> = later ? { activityAt: d.placedAt, activityDay: dayOf(d.placedAt) } : {};
          if (d.answerId !== null) inc[`counts.${d.answerId}`] = 1;
          else {
            const key = writeInKey(d.text);
            inc[`writeIns.${key}.n`] = 1;
            set[`writeIns.${key}.text`] = d.text.trim();
          }
          await updateOnce(views, d.castieId, record, { $inc: inc, $set: set, $max: { lastForecastAt: d.placedAt }, $setOnInsert: viewSeed(['forecastsCount', d.answerId !== null ? 'counts' : 'writeIns', 'lastForecastAt']) });
          if (later) await markDay('activity', dayOf(d.placedAt));
          return;
        }
        case 'CastieAnswered': {
          const d = e.data;
          await updateOnce(views, d.castieId, record, { $set: { answered: true, correctAnswerId: d.correctAnswerId, correctText: d.correctText, answeredAt: d.answeredAt }, $setOnInsert: viewSeed(['answered', 'correctAnswerId', 'correctText']) });
          for (const s of d.scores) {
            await updateOnce(forecasts, forecastDocId(d.castieId, s.userId), record, { $set: { correct: s.correct, points: s.points } });
          }
          return;
        }
        case 'CastieReported':
          await updateOnce(views, e.data.castieId, record, { $inc: { reports: 1 }, $setOnInsert: viewSeed(['reports']) });
          return;
        case 'CommentPosted': {
          const d = e.data;
          await updateOnce(comments, d.commentId, record, { $set: { castieId: d.castieId, userId: d.userId, text: d.text, postedAt: d.postedAt }, $setOnInsert: { deleted: false, reporters: [] } });
          await updateOnce(views, d.castieId, record, { $inc: { commentsCount: 1 }, $setOnInsert: viewSeed(['commentsCount']) });
          return;
        }
        case 'CommentDeleted': {
          const comment = await comments.findOne({ _id: e.data.commentId });
          const wasShown = comment && !comment.deleted && comment.reporters.length < castieRules.commentReportsToHide;
          const changed = await updateOnce(comments, e.data.commentId, record, { $set: { deleted: true } });
          if (changed && wasShown) await updateOnce(views, e.data.castieId, record, { $inc: { commentsCount: -1 }, $setOnInsert: viewSeed(['commentsCount']) });
          return;
        }
        case 'CommentReported': {
          const comment = await comments.findOne({ _id: e.data.commentId });
          if (!comment || comment.reporters.includes(e.data.reporterId)) return;
          const changed = await updateOnce(comments, e.data.commentId, record, { $addToSet: { reporters: e.data.reporterId } });
          // Hidden from everyone at the third distinct reporter: it stops counting.
          if (changed && !comment.deleted && comment.reporters.length + 1 === castieRules.commentReportsToHide) {
            await updateOnce(views, e.data.castieId, record, { $inc: { commentsCount: -1 }, $setOnInsert: viewSeed(['commentsCount']) });
          }
          return;
        }
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
