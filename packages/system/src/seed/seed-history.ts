import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_LOGINS_TOPIC, IDENTITY_TOPIC, NOTIFICATIONS_TOPIC, SOCIAL_TOPIC } from '@castie/contracts';
import { groupStreamId } from '@castie/groups';
import { argon2idHasher, handleStreamId } from '@castie/identity';
import type { EventLog, EventStore } from '@castie/platform';
import { seedAnswers, seedCasties, seedComments, seedForecasts } from './casties.ts';
import { SeedContext, SeedError, seedWriters, silentProgress, type SeedDeps, type SeedProgress } from './context.ts';
import { seedFollows, seedGroups, seedGroupSlug } from './groups.ts';
import { SEED_PASSWORD, seedEmail, seedFrodads, seedHandle, seedUsers } from './people.ts';

export { SeedError, silentProgress, type SeedDeps, type SeedProgress } from './context.ts';
export { SEED_PASSWORD } from './people.ts';

export interface SeedOptions {
  users: number;
  groups: number;
  casties: number;
  forecasts: number;
  /** Average number of frodads per person. */
  friends: number;
  /** Frodads of the hub (the first seeded user); default 300, at most users - 1. */
  hubFriends?: number;
  /** Comments in all; default two per Castie. */
  comments?: number;
  /** PRNG seed: the same seed gives the same history (ids aside). Default 42. */
  seed?: number;
  /** "Now" of the history, which spans the year before it. Default: the real current time. */
  now?: Date;
  /** Time zone in which closing dates and times are entered (the service's TZ_NAME). Default UTC. */
  timeZone?: string;
  /** Write into a log that already holds events (numbering people and groups after earlier seeds). */
  append?: boolean;
  /** Commands in flight at once. Default 1000. */
  concurrency?: number;
}

export interface SeedSummary {
  now: string;
  from: string;
  seed: number;
  /** Every seeded account signs in with its e-mail and this password. */
  password: string;
  hub: { handle: string; email: string; frodads: number; groups: number };
  /** First and last handle seeded. */
  handles: [string, string] | null;
  users: number;
  privateUsers: number;
  usersWithCity: number;
  groups: number;
  approvalGroups: number;
  groupAdmins: number;
  follows: number;
  accessGranted: number;
  pendingAccessRequests: number;
  frodads: number;
  pendingFrodadRequests: number;
  casties: number;
  withOptions: number;
  writeIn: number;
  openEnded: number;
  /** Casties whose end date has passed. */
  ended: number;
  forecasts: number;
  correctForecasts: number;
  answered: number;
  answeredOpenEnded: number;
  comments: number;
  /** Events appended, in all and per topic. */
  events: number;
  eventsByTopic: Record<string, number>;
  /** Seconds per phase, and in all. */
  phaseSeconds: Record<string, number>;
  seconds: number;
  /** Where a count differs from the one asked for, and why. */
  notes: string[];
}

/** Every topic of the system: a log holding events in any of them already has a history. */
const TOPICS = [IDENTITY_TOPIC, IDENTITY_LOGINS_TOPIC, GROUPS_TOPIC, SOCIAL_TOPIC, CASTIES_TOPIC, NOTIFICATIONS_TOPIC];

async function eventCounts(log: EventLog): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const topic of TOPICS) counts[topic] = [...(await log.endOffsets(topic)).values()].reduce((a, b) => a + b, 0);
  return counts;
}

/** The first n >= 0 for which `taken(n)` is false, when earlier seeds took 0, 1, 2... in a row. */
async function firstFree(taken: (n: number) => Promise<boolean>): Promise<number> {
  if (!(await taken(0))) return 0;
  let hi = 1;
  while (await taken(hi)) hi *= 2;
  let lo = hi / 2;
  // taken(lo) is true, taken(hi) false.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await taken(mid)) lo = mid;
    else hi = mid;
  }
  return hi;
}

const exists = async (store: EventStore, streamId: string) => (await store.readStream(streamId)).version > 0;

function check(options: SeedOptions): Required<Omit<SeedOptions, 'hubFriends' | 'comments' | 'now'>> & { hubFriends: number; comments: number; now: Date; notes: string[] } {
  const notes: string[] = [];
  const whole = (name: string, value: number, min: number) => {
    if (!Number.isSafeInteger(value) || value < min) throw new SeedError(`${name} must be a whole number of at least ${min} (got ${value})`);
  };
  whole('users', options.users, 1);
  whole('groups', options.groups, 1);
  whole('casties', options.casties, 0);
  whole('forecasts', options.forecasts, 0);
  if (!Number.isFinite(options.friends) || options.friends < 0) throw new SeedError(`friends must be a number of at least 0 (got ${options.friends})`);
  let hubFriends = options.hubFriends;
  if (hubFriends === undefined) {
    hubFriends = Math.min(300, options.users - 1);
    if (hubFriends < 300) notes.push(`the hub has ${hubFriends} frodads, not 300: there are only ${options.users} people`);
  }
  whole('hub-friends', hubFriends, 0);
  if (hubFriends > options.users - 1) throw new SeedError(`hub-friends (${hubFriends}) must be less than users (${options.users}): the hub can befriend everyone else at most`);
  const comments = options.comments ?? 2 * options.casties;
  whole('comments', comments, 0);
  const concurrency = options.concurrency ?? 1000;
  whole('concurrency', concurrency, 1);
  const now = options.now ?? new Date();
  if (Number.isNaN(now.getTime())) throw new SeedError('now must be a valid instant');
  const timeZone = options.timeZone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new SeedError(`unknown time zone ${timeZone}`);
  }
  return { ...options, hubFriends, comments, concurrency, now, timeZone, seed: options.seed ?? 42, append: options.append ?? false, notes };
}

/**
 * Writes a year of realistic history straight through the write side: every event is decided by
 * the services' own deciders through CommandHandler on the services' event stores, from the same
 * commands their routes issue, at past instants (`meta.now` and the commands' `now`). Phases run
 * in dependency order (people, groups, follows, frodads, Casties, forecasts, answers, comments),
 * each roughly chronological, with many commands in flight so appends share group commits.
 *
 * Refuses (SeedError) to write into a log that already holds events unless `append` is set.
 */
export async function seedHistory(deps: SeedDeps, options: SeedOptions, progress: SeedProgress = silentProgress): Promise<SeedSummary> {
  const started = performance.now();
  const o = check(options);
  const before = await eventCounts(deps.log);
  const existing = Object.values(before).reduce((a, b) => a + b, 0);
  if (existing > 0 && !o.append) {
    const topics = Object.entries(before).filter(([, n]) => n > 0).map(([t, n]) => `${t}: ${n}`).join(', ');
    throw new SeedError(`the event log already holds ${existing} events (${topics}); seeding would mix two histories. Pass --append to add to it, or use an empty data dir`);
  }

  const write = await seedWriters(deps);
  const ctx = new SeedContext(write, progress, o.now.getTime(), o.seed, o.concurrency, o.timeZone);
  ctx.notes.push(...o.notes);
  // Appending: number people and groups after those of earlier seeds.
  const firstUser = o.append ? await firstFree((n) => exists(write.stores.logins, handleStreamId(seedHandle(n)))) : 0;
  const firstGroup = o.append ? await firstFree((n) => exists(write.stores.groups, groupStreamId(seedGroupSlug(n)))) : 0;
  if (firstUser > 0 || firstGroup > 0) ctx.notes.push(`appended after earlier seeds: people from ${seedHandle(firstUser)}, groups from number ${firstGroup}`);

  const phaseSeconds: Record<string, number> = {};
  const timed = async <T>(phase: string, run: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const result = await run();
    phaseSeconds[phase] = Math.round((performance.now() - t) / 100) / 10;
    return result;
  };

  // One argon2id hash, shared by every account: hashing per sign-up would take hours.
  const passwordHash = await argon2idHasher().hash(SEED_PASSWORD);
  const users = await timed('users', () => seedUsers(ctx, o.users, firstUser, passwordHash));
  const groups = await timed('groups', () => seedGroups(ctx, o.groups, firstGroup));
  const follows = await timed('follows', () => seedFollows(ctx, users, groups));

  const maxPairs = (o.users * (o.users - 1)) / 2;
  let accepted = Math.max(Math.round((o.users * o.friends) / 2), o.hubFriends);
  if (accepted > Math.round((o.users * o.friends) / 2)) ctx.notes.push(`frodads raised to ${accepted} so the hub can have ${o.hubFriends}`);
  const otherPairs = ((o.users - 1) * (o.users - 2)) / 2;
  if (accepted - o.hubFriends > otherPairs) {
    accepted = o.hubFriends + otherPairs;
    ctx.notes.push(`frodads capped at ${accepted}: ${o.users} people cannot have an average of ${o.friends}`);
  }
  const pendingRoom = maxPairs - accepted;
  if (Math.round((accepted * 5) / 95) > pendingRoom) ctx.notes.push('fewer pending frodad requests than 5%: every pair of people is already frodads');
  const frodads = await timed('frodads', () => seedFrodads(ctx, users, accepted, o.hubFriends, pendingRoom));

  const casties = await timed('casties', () => seedCasties(ctx, users, groups, o.casties));
  const forecasts = await timed('forecasts', () => seedForecasts(ctx, users, groups, casties, o.forecasts));
  if (forecasts < o.forecasts) {
    const why = casties.length === 0 ? 'there is no Castie to forecast' : 'every person who could see a Castie before it closed has forecast it';
    ctx.notes.push(`placed ${forecasts} forecasts, not ${o.forecasts}: ${why}`);
  }
  const answers = await timed('answers', () => seedAnswers(ctx, users, casties));
  const comments = await timed('comments', () => seedComments(ctx, users, groups, casties, o.comments));
  if (comments < o.comments) ctx.notes.push(`posted ${comments} comments, not ${o.comments}: there is no Castie to comment on`);

  const after = await eventCounts(deps.log);
  const eventsByTopic = Object.fromEntries(TOPICS.map((t) => [t, after[t]! - before[t]!]).filter(([, n]) => n !== 0));
  const hub = users[0]!;
  return {
    now: o.now.toISOString(),
    from: new Date(ctx.start).toISOString(),
    seed: o.seed,
    password: SEED_PASSWORD,
    hub: { handle: hub.handle, email: seedEmail(firstUser), frodads: frodads.hubFrodads, groups: follows.hubGroups },
    handles: users.length > 0 ? [users[0]!.handle, users.at(-1)!.handle] : null,
    users: users.length,
    privateUsers: users.filter((u) => u.isPrivate).length,
    usersWithCity: users.filter((u) => u.place).length,
    groups: groups.length,
    approvalGroups: groups.filter((g) => g.state.requiresApproval).length,
    groupAdmins: follows.admins,
    follows: follows.follows,
    accessGranted: follows.granted,
    pendingAccessRequests: follows.pending,
    frodads: frodads.accepted,
    pendingFrodadRequests: frodads.pending,
    casties: casties.length,
    withOptions: casties.filter((c) => !c.allowWriteIn).length,
    writeIn: casties.filter((c) => c.allowWriteIn).length,
    openEnded: casties.filter((c) => c.endsAt === null).length,
    ended: casties.filter((c) => c.endsAt !== null && c.endsAt <= ctx.now).length,
    forecasts,
    correctForecasts: answers.correctForecasts,
    answered: answers.answered,
    answeredOpenEnded: answers.answeredOpenEnded,
    comments,
    events: ctx.events,
    eventsByTopic,
    phaseSeconds,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    notes: ctx.notes,
  };
}
