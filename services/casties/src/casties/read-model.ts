import { CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { collectionSpec, updateOnce, type Doc, type Projection, type Update } from '@castie/platform';
import { createHash } from 'node:crypto';

/**
 * One Castie as every list shows it: everything of a Castie object that does not depend on the
 * requester (their forecast, their friends), with the keys the feeds sort by. Built from the
 * Castie's own stream and its forecasts; comments are counted by the comments read model.
 */
export interface CastieView extends Doc {
  groupSlug: string;
  creatorId: string;
  question: string;
  showUsername: boolean;
  allowWriteIn: boolean;
  options: { answerId: number; text: string }[];
  /** Forecasts per answer id (set options). */
  counts: Record<string, number>;
  /** Write-in forecasts grouped by their trimmed lower-case text: count by key (a hash of the text)… */
  writeIns: Record<string, number>;
  /** …and the text shown for each key (as the first forecast wrote it). */
  writeInTexts: Record<string, string>;
  forecastsCount: number;
  /** null while only forecasts of the Castie arrived (another partition), not its creation. */
  createdAt: string | null;
  lastForecastAt: string | null;
  /** Latest forecast, or creation while nobody has forecast: the order of following and spicy. */
  activityAt: string | null;
  endsAt: string | null;
  endDate: string | null;
  endTime: string | null;
  answered: boolean;
  answeredAt?: string;
  correctAnswerId: number | null;
  correctText: string | null;
  reports: number;
}

/**
 * Indexes, each serving "index range + limit": the following tab and group pages (a group's
 * Casties by activity, merged across the followed groups), spicy (all by activity), new (by
 * creation, all or per group), and a creator's Casties (profile list, Casties to answer).
 */
export const CASTIE_VIEWS = collectionSpec<CastieView>({
  name: 'castie_views',
  arrays: ['options'],
  indexes: [
    { keys: { groupSlug: 1, activityAt: -1, _id: -1 } },
    { keys: { activityAt: -1, _id: -1 } },
    { keys: { groupSlug: 1, createdAt: -1, _id: -1 } },
    { keys: { createdAt: -1, _id: -1 } },
    { keys: { creatorId: 1, createdAt: -1, _id: -1 } },
    // The own-data export pages a creator's Casties by id.
    { keys: { creatorId: 1, _id: 1 } },
  ],
});

export const writeInKey = (text: string): string => createHash('sha1').update(text.trim().toLowerCase()).digest('hex').slice(0, 16);

type Fields = Omit<CastieView, keyof Doc>;
const empty: Fields = {
  groupSlug: '',
  creatorId: '',
  question: '',
  showUsername: true,
  allowWriteIn: false,
  options: [],
  counts: {},
  writeIns: {},
  writeInTexts: {},
  forecastsCount: 0,
  createdAt: null,
  lastForecastAt: null,
  activityAt: null,
  endsAt: null,
  endDate: null,
  endTime: null,
  answered: false,
  correctAnswerId: null,
  correctText: null,
  reports: 0,
};
/** The fields a new view starts with, except those the creating update writes itself, by those fields' names. */
const seeds = new Map<string, Partial<Fields>>();

/**
 * Applies an update to a view, creating it with every field when the Castie's first event arrives.
 * Once per event of a rebuild: the fields' names are read in place (splitting and joining arrays
 * of them was a sixth of the Castie views' rebuild).
 */
function viewUpdate(update: Update<CastieView>): Update<CastieView> {
  let key = '';
  for (const fields of [update.$set, update.$inc, update.$max]) {
    for (const path in fields) {
      const dot = path.indexOf('.');
      key += `${dot < 0 ? path : path.slice(0, dot)},`;
    }
  }
  let seed = seeds.get(key);
  if (!seed) {
    const written = new Set(key.split(','));
    seeds.set(key, (seed = Object.fromEntries(Object.entries(empty).filter(([k]) => !written.has(k))) as Partial<Fields>));
  }
  return { ...update, $setOnInsert: seed };
}

/**
 * The Castie views, fed by the casties topic. Events of one Castie travel in several streams
 * (castie-, forecast-), which the cluster may put in different partitions: every update is
 * written so that the result does not depend on the order they arrive in ($max for times,
 * counters guarded by updateOnce).
 */
export function castieViewsProjection(): Projection {
  return {
    name: 'castie-views',
    version: 1,
    topics: [CASTIES_TOPIC],
    collections: [CASTIE_VIEWS],
    async apply(event, _envelope, record, unit) {
      const views = unit.collection(CASTIE_VIEWS);
      const e = event as CastieEvent;
      switch (e.type) {
        case 'CastieCreated': {
          const d = e.data;
          await updateOnce(
            views,
            d.castieId,
            record,
            viewUpdate({
              $set: { groupSlug: d.groupSlug, creatorId: d.creatorId, question: d.question, showUsername: d.showUsername, allowWriteIn: d.allowWriteIn, options: d.options, createdAt: d.createdAt, endsAt: d.endsAt, endDate: d.endDate, endTime: d.endTime },
              // A forecast seen first keeps the later activity.
              $max: { activityAt: d.createdAt },
            }),
          );
          return;
        }
        case 'ForecastPlaced': {
          const d = e.data;
          const inc: NonNullable<Update<CastieView>['$inc']> = { forecastsCount: 1 };
          const set: NonNullable<Update<CastieView>['$set']> = {};
          if (d.answerId !== null) inc[`counts.${d.answerId}`] = 1;
          else {
            const key = writeInKey(d.text);
            inc[`writeIns.${key}`] = 1;
            set[`writeInTexts.${key}`] = d.text.trim();
          }
          await updateOnce(views, d.castieId, record, viewUpdate({ $inc: inc, $set: set, $max: { lastForecastAt: d.placedAt, activityAt: d.placedAt } }));
          return;
        }
        case 'CastieAnswered': {
          const d = e.data;
          await updateOnce(views, d.castieId, record, viewUpdate({ $set: { answered: true, correctAnswerId: d.correctAnswerId, correctText: d.correctText, answeredAt: d.answeredAt } }));
          return;
        }
        case 'CastieReported':
          await updateOnce(views, e.data.castieId, record, viewUpdate({ $inc: { reports: 1 } }));
          return;
        case 'ForecastsScored':
        case 'CommentPosted':
        case 'CommentDeleted':
        case 'CommentReported':
          return;
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
