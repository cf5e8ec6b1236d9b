import { CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { collectionSpec, updateOnce, type Collection, type Doc, type Filter, type Projection, type UnitOfWork } from '@castie/platform';

/** One forecast (by Castie, by user), scored once its Castie is answered. `_id`: see forecastDocId. */
export interface ForecastDoc extends Doc {
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
}

/**
 * Who forecast a Castie, compactly: the forecasters' numbers (see ForecasterDoc), 8 hex digits
 * each, in the order they forecast. A page of Casties finds its viewer's frodads among them in
 * memory instead of scanning every forecast of every Casty on the page (`_id`: the Castie's uuid).
 */
export interface RosterDoc extends Doc {
  forecasters: string;
}

/** A forecaster's number in rosters, given at their first forecast (`_id`: the user's id). */
export interface ForecasterDoc extends Doc {
  n: number;
}

/** The last forecaster number counted (one document, `_id` 'next'), and for whom (see `numberOf`). */
interface CounterDoc extends Doc {
  next: number;
  countedFor?: string;
}

/**
 * Index: a person's forecasts newest first (profile stats, group accuracy, the own-data export's
 * pages). A Castie's forecasts need none of their own: their ids begin with the Castie's
 * (forecastDocId), so the `_id` index holds them together (forecastsOfCastie). Every index here
 * costs each forecast one more B-tree page written at every commit: one by (castieId, userId)
 * held the `_id` order a second time (37 MB and a second of the rebuild on the seeded history),
 * and one by (userId, _id) served the export alone, which now pages by time.
 */
export const FORECASTS = collectionSpec<ForecastDoc>({
  name: 'castie_forecasts',
  indexes: [{ keys: { userId: 1, placedAt: -1, _id: -1 } }],
});
export const ROSTERS = collectionSpec<RosterDoc>({ name: 'castie_rosters' });
export const FORECASTERS = collectionSpec<ForecasterDoc>({ name: 'castie_forecasters' });
const COUNTER = collectionSpec<CounterDoc>({ name: 'castie_forecaster_counter' });

export const forecastDocId = (castieId: string, userId: string): string => `${castieId}:${userId}`;

/** Every forecast on a Castie (every forecast when the answer is scored): the ids from `<castieId>:` up to `<castieId>;`, the next character. */
export const forecastsOfCastie = (castieId: string): Filter<ForecastDoc> => ({ _id: { $gt: `${castieId}:`, $lt: `${castieId};` } });

const NUMBER_DIGITS = 8;
const encodeNumber = (n: number): string => n.toString(16).padStart(NUMBER_DIGITS, '0');

/**
 * The forecasts read model, fed by the casties topic: placed forecasts, their scores once
 * answered, and each Castie's roster of forecasters.
 */
export function forecastsProjection(): Projection {
  /**
   * The user's number, given now when this is their first forecast. On MongoDB each write stands
   * alone, and a delivery may stop between counting and giving the number. The counter says whom
   * it last counted for: while nobody else counted since, the user's delivery that comes again
   * takes that number; once someone did (another partition applied first after a restart, or the
   * record replayed from the dead letters later), it counts anew and that number stays unused.
   * Guarding the count by the record instead (updateOnce) read back a number another forecaster
   * had been given since: two forecasters with one number, each shown as the other on rosters.
   * Counts never overlap: one consumer applies one partition's batch at a time (deploy/README.md),
   * and a dead letter is replayed with no batch in flight (ProjectionRunner.replay).
   */
  async function numberOf(unit: UnitOfWork, userId: string): Promise<number> {
    const forecasters = unit.collection(FORECASTERS);
    const counter = unit.collection(COUNTER);
    const known = await forecasters.findOne({ _id: userId });
    if (known) return known.n;
    if ((await counter.findOne({ _id: 'next' }))?.countedFor !== userId) await counter.updateOne({ _id: 'next' }, { $inc: { next: 1 }, $set: { countedFor: userId } }, { upsert: true });
    const n = (await counter.findOne({ _id: 'next' }))!.next;
    await forecasters.updateOne({ _id: userId }, { $setOnInsert: { n } }, { upsert: true });
    return (await forecasters.findOne({ _id: userId }))!.n;
  }

  return {
    name: 'forecasts',
    version: 2,
    topics: [CASTIES_TOPIC],
    collections: [FORECASTS, ROSTERS, FORECASTERS, COUNTER],
    async apply(event, _envelope, record, unit) {
      const forecasts = unit.collection(FORECASTS);
      const e = event as CastieEvent;
      if (e.type === 'ForecastPlaced') {
        const d = e.data;
        const placed = await updateOnce(forecasts, forecastDocId(d.castieId, d.userId), record, {
          $set: { castieId: d.castieId, groupSlug: d.groupSlug, userId: d.userId, forecastId: d.forecastId, answerId: d.answerId, text: d.text, placedAt: d.placedAt },
          $setOnInsert: { correct: null, points: 0 },
        });
        // null: this record reached the forecast before. Where each write stands alone (MongoDB),
        // that delivery may have stopped before the roster, so the roster is checked all the same.
        const number = encodeNumber(await numberOf(unit, d.userId));
        const rosters = unit.collection(ROSTERS);
        const roster = (await rosters.findOne({ _id: d.castieId }))?.forecasters ?? '';
        // Only a placed forecast puts its forecaster on the roster, and forecast documents are never
        // deleted: one this event made (not one a score made first) is on no roster yet. Scanning
        // a popular Castie's roster for every forecast was 2 % of a rebuild's thread.
        if (placed === 'inserted' || !includesNumber(roster, number)) await updateOnce(rosters, d.castieId, record, { $set: { forecasters: roster + number } });
      } else if (e.type === 'CastieAnswered' || e.type === 'ForecastsScored') {
        // A score may arrive before its forecast (another partition): the forecast fills in the rest.
        for (const s of e.data.scores) await updateOnce(forecasts, forecastDocId(e.data.castieId, s.userId), record, { $set: { correct: s.correct, points: s.points } });
      }
    },
  };
}

function includesNumber(roster: string, number: string): boolean {
  for (let i = roster.indexOf(number); i >= 0; i = roster.indexOf(number, i + 1)) if (i % NUMBER_DIGITS === 0) return true;
  return false;
}

/** Rosters decoded once per version: a roster the document cache hands out is frozen until it changes. */
const decoded = new WeakMap<RosterDoc, Uint32Array>();
function rosterNumbers(roster: RosterDoc): Uint32Array {
  let numbers = decoded.get(roster);
  if (!numbers) {
    const packed = Buffer.from(roster.forecasters, 'hex');
    numbers = new Uint32Array(packed.length >> 2);
    for (let i = 0; i < numbers.length; i++) numbers[i] = packed.readUInt32BE(i << 2);
    if (Object.isFrozen(roster)) decoded.set(roster, numbers);
  }
  return numbers;
}

/**
 * Which frodads forecast a Castie, per friend list and roster: both are frozen documents of the
 * store's cache (a friend list's array and a roster are the same objects until a commit changes
 * them), so an answer holds exactly as long as both do, and goes with them. A frodad's number
 * never changes, and a frodad who gets one (their first forecast) is in the new roster of that
 * Castie only. Scanning rosters was the largest part of a home page's own work (rosters of
 * popular Casties hold thousands of forecasters), and most of a page's rosters do not change
 * between two reads by the same person. (A store that hands out copies, such as MongoDB, misses
 * every time.) Outside the cache's budget, but bounded by it: an answer lives only while its friend
 * list and roster are cached or in use, and is a few ids (a shared empty one when none).
 */
const frodadsOnRoster = new WeakMap<readonly string[], WeakMap<RosterDoc, readonly string[]>>();
const NONE: readonly string[] = Object.freeze([]);
const EMPTY_NUMBERS = new Uint32Array(0);

/**
 * Which of a viewer's frodads forecast each Castie of a page, in the order they forecast: the
 * Casties' rosters by id, then, for the rosters not answered before (see frodadsOnRoster), the
 * frodads' numbers by id and a pass over those rosters in memory, whatever the number of
 * forecasts on the page.
 */
export async function frodadsWhoForecast(
  collections: { rosters: Collection<RosterDoc>; forecasters: Collection<ForecasterDoc> },
  castieIds: readonly string[],
  friendIds: readonly string[],
): Promise<Map<string, readonly string[]>> {
  const out = new Map<string, readonly string[]>();
  if (castieIds.length === 0 || friendIds.length === 0) return out;
  let known: WeakMap<RosterDoc, readonly string[]> | undefined;
  if (Object.isFrozen(friendIds)) {
    known = frodadsOnRoster.get(friendIds);
    if (!known) frodadsOnRoster.set(friendIds, (known = new WeakMap()));
  }
  // Nothing can be known (a store that hands out copies): both reads at once, as one round trip.
  const [rosters, numbersRead] = await Promise.all([collections.rosters.byIds(castieIds), known ? null : collections.forecasters.byIds(friendIds)]);
  const unknown: RosterDoc[] = [];
  for (const roster of rosters.values()) {
    const found = known?.get(roster);
    if (found === undefined) unknown.push(roster);
    else if (found.length > 0) out.set(roster._id, found);
  }
  if (unknown.length === 0) return out;
  const byFriend = numbersRead ?? (await collections.forecasters.byIds(friendIds));
  const numbers = [...byFriend.values()];
  const friendByNumber = new Map<number, string>();
  for (const { n, _id } of numbers) friendByNumber.set(n, _id);
  // A bitmap over the frodads' numbers answers "is this a frodad" without a lookup per forecaster.
  let min = Infinity;
  let max = -Infinity;
  for (const { n } of numbers) {
    if (n < min) min = n;
    if (n > max) max = n;
  }
  const bits = new Uint8Array(numbers.length === 0 ? 0 : ((max - min) >> 3) + 1);
  for (const { n } of numbers) bits[(n - min) >> 3]! |= 1 << ((n - min) & 7);
  for (const roster of unknown) {
    const forecasters = numbers.length === 0 ? EMPTY_NUMBERS : rosterNumbers(roster);
    let found: string[] | undefined;
    for (let i = 0; i < forecasters.length; i++) {
      const at = forecasters[i]! - min;
      // Numbers below min wrap around to above max - min (unsigned), and fail the range test too.
      if (at >>> 0 > max - min || (bits[at >>> 3]! & (1 << (at & 7))) === 0) continue;
      (found ??= []).push(friendByNumber.get(at + min)!);
    }
    const answer = found ? Object.freeze(found) : NONE;
    if (Object.isFrozen(roster)) known?.set(roster, answer);
    if (found) out.set(roster._id, answer);
  }
  return out;
}
