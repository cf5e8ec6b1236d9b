import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, LIVE_CHANGES_CHANNEL, NOTIFICATIONS_TOPIC, SOCIAL_TOPIC, type CastieEvent, type GroupEvent, type IdentityEvent, type LiveChange, type NotificationEvent, type SocialEvent } from '@castie/contracts';
import type { AppliedEvent, Cache, Clock, DocumentStore } from '@castie/platform';
import type { GroupDirectory, People } from '@castie/reference';
import type { FastifyBaseLogger } from 'fastify';
import { collections } from '../read-model/projection.ts';

/** A batch larger than this says "anyone" instead of working out each event's audience (rebuilds, catch-up after a restart). */
const LARGE_BATCH = 200;
/** Requests or forecasts of one person read to work out whom their sign-up concerns; more say "anyone". */
const CONCERNED_LIMIT = 500;

/**
 * Tells live streams whose notification counts may have changed (issue 13). It runs after the
 * notifications read model committed a batch (the runner's `committed` hook), so a gateway that
 * reads `initialize` for those users sees the change: counts shown live equal what
 * `GET /api/initialize/` answers. The message goes through the cache's pub/sub, which in the
 * cluster is Redis: it reaches every gateway, whichever holds the user's stream.
 *
 * The audience of each event mirrors who views.ts counts it for (decisions.md "Who is notified");
 * it may be wider than needed (a stream that checks and finds nothing new sends nothing), never
 * narrower. A Castie reaching its end time is no event: a ticker looks for Casties whose end
 * passed since it last looked and names their creators.
 */
export class LiveChanges {
  #chain: Promise<void> = Promise.resolve();
  #ticker: NodeJS.Timeout | null = null;
  #lastTick: string;
  readonly #c;

  constructor(
    private readonly deps: { cache: Cache; store: DocumentStore; people: People; groups: GroupDirectory; clock: Clock; logger?: FastifyBaseLogger },
  ) {
    this.#c = collections(deps.store);
    this.#lastTick = deps.clock.now().toISOString();
  }

  /** The runner's `committed` hook: works out the audience and publishes, in batch order, in the background. */
  readonly committed = (events: readonly AppliedEvent[]): void => {
    this.#chain = this.#chain.then(() => this.#publishFor(events)).catch((error: unknown) => this.deps.logger?.warn({ err: error }, 'live change not published'));
  };

  /** Looks every `everyMs` for Casties that ended since the last look (their creators' needs-answer count grew). */
  startTicker(everyMs: number): void {
    this.#ticker = setInterval(() => {
      this.#chain = this.#chain.then(() => this.#tick()).catch((error: unknown) => this.deps.logger?.warn({ err: error }, 'ended Casties not checked'));
    }, everyMs);
    this.#ticker.unref();
  }

  async stop(): Promise<void> {
    if (this.#ticker) clearInterval(this.#ticker);
    await this.#chain;
  }

  async #tick(): Promise<void> {
    const now = this.deps.clock.now().toISOString();
    if (now <= this.#lastTick) return;
    const ended = await this.#c.casties.find({ endsAt: { $gt: this.#lastTick, $lte: now }, answered: false });
    this.#lastTick = now;
    if (ended.length > 0) await this.#publish({ users: [...new Set(ended.map((c) => c.creatorId))] });
  }

  async #publishFor(events: readonly AppliedEvent[]): Promise<void> {
    if (events.length > LARGE_BATCH) return this.#publish({ users: null });
    const users = new Set<string>();
    for (const applied of events) {
      const audience = await this.#audience(applied);
      if (audience === null) return this.#publish({ users: null });
      for (const id of audience) users.add(id);
    }
    if (users.size > 0) await this.#publish({ users: [...users] });
  }

  #publish(change: LiveChange): Promise<void> {
    return this.deps.cache.publish(LIVE_CHANGES_CHANNEL, JSON.stringify(change));
  }

  /** Whose counts the event may change; null: anyone's. */
  async #audience({ event, record }: AppliedEvent): Promise<string[] | null> {
    switch (record.topic) {
      case SOCIAL_TOPIC: {
        const e = event as SocialEvent;
        // Requests and acceptances are notifications; a friendship changes what frodads' activity counts.
        return e.type === 'FrodadRemoved' ? [e.data.byId, e.data.otherId] : 'fromId' in e.data ? [e.data.fromId, e.data.toId] : [];
      }
      case GROUPS_TOPIC: {
        // Access granted is a notification; following changes which new Casties count.
        const data = (event as GroupEvent).data as { userId?: string };
        return data.userId ? [data.userId] : [];
      }
      case NOTIFICATIONS_TOPIC:
        // Opening the Activity section (or signing in) resets what counts as new.
        return [(event as NotificationEvent).data.userId];
      case IDENTITY_TOPIC: {
        const e = event as IdentityEvent;
        // A deleted account's notifications vanish, a private one's activity stops counting, for
        // anyone who had them: not worth working out for events this rare.
        if (e.type === 'AccountDeleted' || e.type === 'PrivacyChanged') return null;
        // Someone's requests and activity count once they are active: this read model may have
        // applied them before their sign-up, which comes on another topic.
        return e.type === 'SignUpCompleted' ? this.#concernedBy(e.data.userId) : [];
      }
      case CASTIES_TOPIC:
        return this.#castieAudience(event as CastieEvent);
      default:
        return [];
    }
  }

  /**
   * Whose counts someone's requests and activity may change: those they asked to be frodads
   * (pending requests), their frodads (their forecasts and comments), and the creators of the
   * Casties they forecast (read by the actor's index: a person just signed up has done little).
   */
  async #concernedBy(userId: string): Promise<string[] | null> {
    const [requests, friends, forecasts] = await Promise.all([
      this.#c.notifications.find({ _id: { $gt: `request:${userId}:`, $lt: `request:${userId};` } }, { limit: CONCERNED_LIMIT }),
      this.deps.people.friendIds(userId),
      this.#c.activity.find({ actorId: userId, kind: 'forecast' }, { limit: CONCERNED_LIMIT }),
    ]);
    // More than a new person does: not worth working out, as for a deleted account.
    if (requests.length === CONCERNED_LIMIT || forecasts.length === CONCERNED_LIMIT) return null;
    const casties = await this.#c.casties.byIds([...new Set(forecasts.map((a) => a.castieId))]);
    return [...requests.map((n) => n.userId), ...friends, ...[...casties.values()].map((c) => c.creatorId)];
  }

  async #castieAudience(e: CastieEvent): Promise<string[]> {
    switch (e.type) {
      case 'CastieCreated':
        // New Casties in a followed group; an end time already passed is the creator's to answer.
        return [e.data.creatorId, ...(await this.deps.groups.followerIds(e.data.groupSlug))];
      case 'ForecastPlaced': {
        const castie = await this.#c.casties.findOne({ _id: e.data.castieId });
        return [...(castie ? [castie.creatorId] : []), ...(await this.deps.people.friendIds(e.data.userId))];
      }
      case 'CastieAnswered': {
        const castie = await this.#c.casties.findOne({ _id: e.data.castieId });
        return [...(castie ? [castie.creatorId] : []), ...e.data.scores.map((s) => s.userId)];
      }
      case 'ForecastsScored':
        return e.data.scores.map((s) => s.userId);
      case 'CommentPosted':
      case 'CommentDeleted':
        return this.deps.people.friendIds(e.data.userId);
      case 'CastieReported':
      case 'CommentReported':
        return [];
      default: {
        const unknown: never = e;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
  }
}
