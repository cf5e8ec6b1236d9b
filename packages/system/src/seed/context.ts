import { castieDecider, commentDecider, forecastDecider } from '@castie/casties';
import { castieEvents, CASTIES_TOPIC, groupEvents, GROUPS_TOPIC, IDENTITY_LOGINS_TOPIC, IDENTITY_TOPIC, identityEvents, loginEvents, SOCIAL_TOPIC, socialEvents, type DomainEvent } from '@castie/contracts';
import { groupDecider, membershipDecider } from '@castie/groups';
import { accountDecider, handleClaimDecider, loginDecider } from '@castie/identity';
import { CommandHandler, type EventLog, type EventStore, type Handled } from '@castie/platform';
import { friendshipDecider } from '@castie/social';
import { Random } from './random.ts';

/** What the seed writes with: the event log and an event store per topic (however they are built). */
export interface SeedDeps {
  log: EventLog;
  eventStore(topic: string): Promise<EventStore>;
}

/** Told how far the seed is: one phase after the other, each a known number of items. */
export interface SeedProgress {
  begin(phase: string, total: number): void;
  advance(count: number): void;
  end(): void;
}

export const silentProgress: SeedProgress = { begin() {}, advance() {}, end() {} };

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** How far back the history reaches. */
export const HISTORY = 365 * DAY;

/** A refusal the person running the seed can fix (bad counts, a data dir that already holds a history). */
export class SeedError extends Error {
  override readonly name = 'SeedError';
}

/**
 * The command handlers of every aggregate the seed writes, built exactly as the services build
 * them (identity, groups, social and casties contexts): same stores, catalogs and deciders.
 */
export async function seedWriters(deps: SeedDeps) {
  const [identity, logins, groups, social, casties] = await Promise.all([IDENTITY_TOPIC, IDENTITY_LOGINS_TOPIC, GROUPS_TOPIC, SOCIAL_TOPIC, CASTIES_TOPIC].map((topic) => deps.eventStore(topic)));
  return {
    logins: new CommandHandler(logins!, loginEvents, loginDecider),
    handles: new CommandHandler(logins!, loginEvents, handleClaimDecider),
    accounts: new CommandHandler(identity!, identityEvents, accountDecider),
    groups: new CommandHandler(groups!, groupEvents, groupDecider),
    memberships: new CommandHandler(groups!, groupEvents, membershipDecider),
    frodads: new CommandHandler(social!, socialEvents, friendshipDecider),
    casties: new CommandHandler(casties!, castieEvents, castieDecider),
    forecasts: new CommandHandler(casties!, castieEvents, forecastDecider),
    comments: new CommandHandler(casties!, castieEvents, commentDecider),
    stores: { identity: identity!, logins: logins!, groups: groups!, social: social!, casties: casties! },
  };
}
export type SeedWriters = Awaited<ReturnType<typeof seedWriters>>;

/** What every phase shares: the writers, the clock of the history, the PRNG seed, counters. */
export class SeedContext {
  events = 0;
  readonly notes: string[] = [];

  constructor(
    readonly write: SeedWriters,
    readonly progress: SeedProgress,
    /** "Now" of the history (ms); it starts a year earlier. */
    readonly now: number,
    readonly seed: number,
    readonly concurrency: number,
    readonly timeZone: string,
  ) {}

  get start(): number {
    return this.now - HISTORY;
  }

  /** The phase's own PRNG stream. */
  random(phase: string): Random {
    return new Random(this.seed, phase);
  }

  /**
   * Handles one command as the service's route would, at a past instant, and insists that it
   * produced events: a command the decider turns into nothing means the plan and the write side
   * disagree, and the seed would report a history it did not write.
   */
  async exec<C extends { type: string }, E extends DomainEvent, S>(handler: CommandHandler<C, E, S>, streamId: string, command: C, actor: string, at: number): Promise<Handled<S, E>> {
    const done = await handler.handle(streamId, command, { actor, now: new Date(at) });
    if (done.events.length === 0) throw new Error(`seed: ${command.type} on ${streamId} produced no event`);
    this.events += done.events.length;
    return done;
  }
}
