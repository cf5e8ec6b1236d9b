import { CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { collectionSpec, insertSeeds, updateOnce, type Doc, type Projection, type Update } from '@castie/platform';
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
/**
 * What a new view starts with, for each kind of update that may create it: every field but those
 * the update writes itself (an update may not name a field twice; `viewChange`'s test checks
 * each). Named per kind, not worked out from each update's field names: that was a twentieth of
 * the Castie views' rebuild, as a forecast's counter is named after its answer.
 */
const seedOf = insertSeeds(empty);
const SEEDS = {
  created: seedOf(['groupSlug', 'creatorId', 'question', 'showUsername', 'allowWriteIn', 'options', 'createdAt', 'endsAt', 'endDate', 'endTime', 'activityAt']),
  forecast: seedOf(['forecastsCount', 'counts', 'lastForecastAt', 'activityAt']),
  writeIn: seedOf(['forecastsCount', 'writeIns', 'writeInTexts', 'lastForecastAt', 'activityAt']),
  answered: seedOf(['answered', 'correctAnswerId', 'correctText', 'answeredAt']),
  reported: seedOf(['reports']),
};

/**
 * `fields` and one more field, named after an answer or a write-in text, as a dictionary from the
 * start: a rebuild names tens of thousands of them, and an object literal took a new hidden class
 * for each, which every reader of the update then met for the first time.
 */
function withField<F extends object, K extends string, V>(fields: F, name: K, value: V): F & Record<K, V> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const key in fields) out[key] = fields[key];
  out[name] = value;
  return out as F & Record<K, V>;
}

/** The change an event of the casties topic makes to its Castie's view (null: none), creating the view if it is the first. */
export function viewChange(e: CastieEvent): Update<CastieView> | null {
  switch (e.type) {
    case 'CastieCreated': {
      const d = e.data;
      return {
        $set: { groupSlug: d.groupSlug, creatorId: d.creatorId, question: d.question, showUsername: d.showUsername, allowWriteIn: d.allowWriteIn, options: d.options, createdAt: d.createdAt, endsAt: d.endsAt, endDate: d.endDate, endTime: d.endTime },
        // A forecast seen first keeps the later activity.
        $max: { activityAt: d.createdAt },
        $setOnInsert: SEEDS.created,
      };
    }
    case 'ForecastPlaced': {
      const d = e.data;
      const times = { lastForecastAt: d.placedAt, activityAt: d.placedAt };
      if (d.answerId !== null) return { $inc: withField({ forecastsCount: 1 }, `counts.${d.answerId}` as const, 1), $max: times, $setOnInsert: SEEDS.forecast };
      const key = writeInKey(d.text);
      return { $inc: withField({ forecastsCount: 1 }, `writeIns.${key}` as const, 1), $set: withField({}, `writeInTexts.${key}` as const, d.text.trim()), $max: times, $setOnInsert: SEEDS.writeIn };
    }
    case 'CastieAnswered': {
      const d = e.data;
      return { $set: { answered: true, correctAnswerId: d.correctAnswerId, correctText: d.correctText, answeredAt: d.answeredAt }, $setOnInsert: SEEDS.answered };
    }
    case 'CastieReported':
      return { $inc: { reports: 1 }, $setOnInsert: SEEDS.reported };
    case 'ForecastsScored':
    case 'CommentPosted':
    case 'CommentDeleted':
    case 'CommentReported':
      return null;
    default: {
      const unknown: never = e;
      throw new Error(`unhandled ${JSON.stringify(unknown)}`);
    }
  }
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
      const e = event as CastieEvent;
      const change = viewChange(e);
      if (change) await updateOnce(unit.collection(CASTIE_VIEWS), e.data.castieId, record, change);
    },
  };
}
