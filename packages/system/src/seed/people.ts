import { frodadsStreamId } from '@castie/social';
import { accountStreamId, handleStreamId, loginStreamId } from '@castie/identity';
import { newId } from '@castie/platform';
import { DAY, HOUR, MINUTE, SeedError, type SeedContext } from './context.ts';
import { inFlight } from './in-flight.ts';
import { WeightedIndex, type Random } from './random.ts';
import { FIRST_NAMES, LAST_NAMES, PLACES } from './vocabulary.ts';

/** Every seeded account can sign in with its e-mail and this password. */
export const SEED_PASSWORD = 'seed-password';

export const seedHandle = (n: number): string => `seed${n}`;
export const seedEmail = (n: number): string => `seed${n}@example.com`;

export interface SeedUser {
  handle: string;
  email: string;
  userId: string;
  firstName: string;
  lastName: string;
  /** When sign-up completed (ms); users are sorted by it, the hub first. */
  joinedAt: number;
  /** How much this person does (creates, forecasts, comments): heavy-tailed, median 1. */
  activity: number;
  isPrivate: boolean;
  place: { city: string; state: string } | null;
}

/**
 * Signs up `count` people (handles `seed<first>`, `seed<first + 1>`, ...) over the year, the way
 * identity's sign-up routes do: CreateLogin on `login-<email>`, OpenAccount, ClaimHandle on
 * `handle-<handle>`, NameProfile, CompleteSignUp; then some set a city (EditProfile) or go private
 * (SetPrivacy). Every account shares one argon2id hash of SEED_PASSWORD. The first is the hub.
 */
export async function seedUsers(ctx: SeedContext, count: number, first: number, passwordHash: string): Promise<SeedUser[]> {
  const random = ctx.random('users');
  // Joining is skewed early (an older community), the hub an hour into the history.
  const joined = Array.from({ length: count - 1 }, () => ctx.start + 2 * HOUR + (ctx.now - 3 * DAY - ctx.start - 2 * HOUR) * random.next() ** 1.3).sort((a, b) => a - b);
  const users: SeedUser[] = [];
  for (let i = 0; i < count; i++) {
    const hub = i === 0;
    users.push({
      handle: seedHandle(first + i),
      email: seedEmail(first + i),
      userId: newId(),
      firstName: random.pick(FIRST_NAMES),
      lastName: random.pick(LAST_NAMES),
      joinedAt: hub ? ctx.start + HOUR : joined[i - 1]!,
      activity: hub ? 4 : random.logNormal(0.9),
      isPrivate: !hub && random.chance(0.05),
      place: hub || random.chance(0.35) ? random.pick(PLACES) : null,
    });
  }

  ctx.progress.begin('users', users.length);
  await inFlight(
    users,
    ctx.concurrency,
    async (user) => {
      const { userId, email, handle } = user;
      const account = accountStreamId(userId);
      let t = user.joinedAt - 2 * MINUTE;
      await ctx.exec(ctx.write.logins, loginStreamId(email), { type: 'CreateLogin', userId, email, passwordHash, context: 'signup' }, userId, t);
      await ctx.exec(ctx.write.accounts, account, { type: 'OpenAccount', userId }, userId, t);
      t += 40_000;
      await ctx.exec(ctx.write.handles, handleStreamId(handle), { type: 'ClaimHandle', userId, handle }, userId, t);
      await ctx.exec(ctx.write.accounts, account, { type: 'NameProfile', handle, firstName: user.firstName, lastName: user.lastName }, userId, t);
      t = user.joinedAt;
      await ctx.exec(ctx.write.accounts, account, { type: 'CompleteSignUp', handle, profPic: '', now: new Date(t) }, userId, t);
      if (user.place) {
        t += 5 * MINUTE;
        await ctx.exec(ctx.write.accounts, account, { type: 'EditProfile', changes: { city: user.place.city, state: user.place.state }, profPic: null, now: new Date(t) }, userId, t);
      }
      if (user.isPrivate) await ctx.exec(ctx.write.accounts, account, { type: 'SetPrivacy', isPrivate: true }, userId, t + 10 * MINUTE);
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();
  return users;
}

interface Pair {
  from: number;
  to: number;
  requestedAt: number;
  /** null: the request is left pending. */
  acceptedAt: number | null;
}

export interface FrodadsResult {
  accepted: number;
  pending: number;
  hubFrodads: number;
}

/**
 * Frodads as social's routes make them: RequestFrodad by one side, RespondToRequest (accept) by
 * the other, on `frodads-<a>-<b>`. `accepted` friendships in all, of which exactly `hubFriends`
 * with the hub (users[0]); the rest between people drawn by a heavy-tailed sociability, so some
 * have many frodads and most a few. About 5% more requests are left pending.
 */
export async function seedFrodads(ctx: SeedContext, users: readonly SeedUser[], accepted: number, hubFriends: number, pendingRoom: number): Promise<FrodadsResult> {
  const random = ctx.random('frodads');
  const n = users.length;
  const pending = Math.min(Math.round((accepted * 5) / 95), pendingRoom);
  const sociability = users.map((_, i) => (i === 0 ? 0 : random.logNormal(0.8)));
  const taken = new Set<number>();
  const key = (a: number, b: number) => (a < b ? a * n + b : b * n + a);

  const pairs: Pair[] = [];
  const add = (a: number, b: number, accept: boolean) => {
    taken.add(key(a, b));
    const [from, to] = random.chance(0.5) ? [a, b] : [b, a];
    const lo = Math.max(users[a]!.joinedAt, users[b]!.joinedAt) + 10 * MINUTE;
    const hi = ctx.now - 2 * HOUR;
    const requestedAt = Math.min(hi, random.chance(0.6) ? lo + random.exponential(3 * DAY) : random.between(lo, hi));
    const acceptedAt = accept ? Math.min(ctx.now - MINUTE, requestedAt + MINUTE + random.exponential(18 * HOUR)) : null;
    pairs.push({ from, to, requestedAt, acceptedAt });
  };

  // The hub's frodads, anyone but the hub.
  for (const i of random.weightedSample(users.map((_, i) => (i === 0 ? 0 : 1)), hubFriends)) add(0, i, true);
  for (const [a, b] of samplePairs(random, accepted - hubFriends, sociability, taken, key)) add(a, b, true);
  // Pending requests may involve anyone, the hub too (its requests list is not empty).
  for (const [a, b] of samplePairs(random, pending, users.map((_, i) => (i === 0 ? 1 : sociability[i]!)), taken, key)) add(a, b, false);
  pairs.sort((x, y) => x.requestedAt - y.requestedAt);

  ctx.progress.begin('frodads', pairs.length);
  await inFlight(
    pairs,
    ctx.concurrency,
    async (pair) => {
      const from = users[pair.from]!;
      const to = users[pair.to]!;
      const stream = frodadsStreamId(from.userId, to.userId);
      await ctx.exec(ctx.write.frodads, stream, { type: 'RequestFrodad', fromId: from.userId, toId: to.userId }, from.userId, pair.requestedAt);
      if (pair.acceptedAt !== null) {
        await ctx.exec(ctx.write.frodads, stream, { type: 'RespondToRequest', byId: to.userId, fromId: from.userId, fromHandle: from.handle, accept: true }, to.userId, pair.acceptedAt);
      }
    },
    (done) => ctx.progress.advance(done),
  );
  ctx.progress.end();
  return { accepted, pending, hubFrodads: hubFriends };
}

/**
 * `count` new pairs of distinct people, each end drawn in proportion to `weights` (people with
 * weight 0 take no part), none of them in `taken` (which it extends). Sparse requests draw and
 * reject duplicates; dense ones (or draws that keep hitting taken pairs) enumerate the free pairs.
 */
function samplePairs(random: Random, count: number, weights: readonly number[], taken: Set<number>, key: (a: number, b: number) => number): [number, number][] {
  if (count <= 0) return [];
  const people = weights.flatMap((w, i) => (w > 0 ? [i] : []));
  let free = (people.length * (people.length - 1)) / 2;
  for (const k of taken) {
    const a = Math.floor(k / weights.length);
    if (weights[a]! > 0 && weights[k % weights.length]! > 0) free--;
  }
  if (count > free) throw new SeedError(`cannot make ${count} more frodad pairs among ${people.length} people: only ${free} pairs are left`);

  const out: [number, number][] = [];
  if (count <= free / 4) {
    const index = new WeightedIndex(weights);
    for (let attempts = 0; out.length < count && attempts < 50 * count + 1000; attempts++) {
      const a = index.draw(random);
      const b = index.draw(random);
      if (a === b || taken.has(key(a, b))) continue;
      taken.add(key(a, b));
      out.push([a, b]);
    }
    if (out.length === count) return out;
  }
  // Dense: every free pair, weighted sample without replacement.
  const candidates: [number, number][] = [];
  for (let i = 0; i < people.length; i++) {
    for (let j = i + 1; j < people.length; j++) {
      const [a, b] = [people[i]!, people[j]!];
      if (!taken.has(key(a, b))) candidates.push([a, b]);
    }
  }
  for (const c of random.weightedSample(candidates.map(([a, b]) => weights[a]! * weights[b]!), count - out.length)) {
    const [a, b] = candidates[c]!;
    taken.add(key(a, b));
    out.push([a, b]);
  }
  return out;
}
