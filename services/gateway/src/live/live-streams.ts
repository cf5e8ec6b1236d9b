import { LIVE_CHANGES_CHANNEL, LiveChangeSchema, type AuthenticatedUser, type NotificationCounts } from '@castie/contracts';
import { RateLimited, type Cache } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';

/** Limits of live streams (README "Live updates"); each has an environment variable. */
export interface LiveLimits {
  /** Open streams one user may hold on one gateway (LIVE_STREAMS_PER_USER). */
  perUser: number;
  /** Open streams one gateway holds in all (LIVE_STREAMS_TOTAL). */
  total: number;
  /** Interval of the heartbeat comment (LIVE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** Bytes a stream may have waiting unsent before its client counts as too slow and is dropped. */
  maxBufferedBytes: number;
  /** Seconds a stream token opens streams for (LIVE_TOKEN_SECONDS). */
  tokenSeconds: number;
}

export const defaultLiveLimits: LiveLimits = { perUser: 5, total: 10_000, heartbeatMs: 15_000, maxBufferedBytes: 64 * 1024, tokenSeconds: 60 };

/** What a stream writes to: an http.ServerResponse, in tests any writable. */
export interface StreamSink {
  write(chunk: string): boolean;
  readonly writableLength: number;
  end(): void;
  destroy(): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}

interface Stream {
  user: AuthenticatedUser;
  sink: StreamSink;
  /** The id of the counts this client holds (last sent, or its Last-Event-ID). */
  lastId: string | null;
  /** Since when a write is waiting for 'drain' (null: not congested). */
  congestedSince: number | null;
  closed: boolean;
}

/** The event id of a set of counts: it names them, so a resuming client that holds them needs nothing. */
export const countsId = (c: NotificationCounts): string => `${c.number_notifications}.${c.number_needing_answer}`;

/**
 * The live streams of one gateway (issue 13: `GET /api/notifications/stream/`).
 *
 * Design: the gateway serves Server-Sent Events itself instead of proxying a streaming response
 * from the notifications service. The services stay plain request/response (the ServiceClient
 * keeps returning whole bodies, in process or over HTTP), and the connections live where the
 * clients are. When the notifications read model has committed a change, the notifications service
 * publishes the users whose counts may have changed on the cache's pub/sub (LIVE_CHANGES_CHANNEL;
 * Redis in the cluster, so every gateway hears it). This gateway then asks the notifications
 * service for those users' counts (`GET /api/initialize/`, the same answer a poll gets at that
 * moment) and sends them to each of their streams whose client does not hold them already.
 *
 * Event ids name the counts (`<number_notifications>.<number_needing_answer>`): counts are state,
 * not a sequence of deltas, so a client that reconnects with `Last-Event-ID` gets the current
 * counts at once unless they are the ones it holds. Nothing is lost across a reconnect, on any
 * gateway, without keeping per-user history anywhere.
 *
 * Bounded: at most `perUser` streams per user and `total` in all (429 beyond); a client that stops
 * reading is dropped once `maxBufferedBytes` wait unsent or a write waited a whole heartbeat for
 * 'drain'; a closed stream leaves nothing behind (its user's entry goes with the last one).
 */
export class LiveStreams {
  readonly #byUser = new Map<string, Set<Stream>>();
  /** Users whose counts are being read; `true` when another change came meanwhile (read again). */
  readonly #refreshing = new Map<string, boolean>();
  #open = 0;
  #heartbeat: NodeJS.Timeout | null = null;
  #unsubscribe: (() => Promise<void>) | null = null;
  #closing = false;

  constructor(
    private readonly deps: {
      cache: Cache;
      /** The user's counts as `GET /api/initialize/` answers them now. */
      counts: (user: AuthenticatedUser) => Promise<NotificationCounts>;
      limits: LiveLimits;
      logger?: FastifyBaseLogger;
    },
  ) {}

  /** Open streams now (metrics, tests). */
  get size(): number {
    return this.#open;
  }

  /** Listens for changes and starts the heartbeat. */
  async start(): Promise<void> {
    this.#unsubscribe = await this.deps.cache.subscribe(LIVE_CHANGES_CHANNEL, (message) => this.#changed(message));
    this.#heartbeat = setInterval(() => this.#beat(), this.deps.limits.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** Throws RateLimited (429) when a new stream for `userId` would exceed a limit. */
  admit(userId: string): void {
    const { perUser, total } = this.deps.limits;
    if ((this.#byUser.get(userId)?.size ?? 0) >= perUser) throw new RateLimited(`at most ${perUser} open notification streams per user`, 5);
    if (this.#open >= total) throw new RateLimited('too many open notification streams; try again shortly', 5);
  }

  /**
   * Holds a stream for the user: registered first, so a change while its first counts are read is
   * not missed, then the current counts unless `lastEventId` names them.
   */
  open(user: AuthenticatedUser, sink: StreamSink, lastEventId: string | null): void {
    this.admit(user.userId);
    const stream: Stream = { user, sink, lastId: lastEventId, congestedSince: null, closed: false };
    const set = this.#byUser.get(user.userId) ?? this.#byUser.set(user.userId, new Set()).get(user.userId)!;
    set.add(stream);
    this.#open++;
    sink.once('close', () => this.#forget(stream));
    // Clients wait this long before reconnecting after a drop.
    this.#write(stream, `retry: 3000\n\n`);
    this.#refresh(user.userId);
  }

  /** Ends every stream (graceful shutdown: the server's close must not wait for them). */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    await this.#unsubscribe?.().catch(() => undefined);
    for (const set of [...this.#byUser.values()]) for (const stream of [...set]) this.#drop(stream, false);
  }

  #changed(message: string): void {
    let parsed;
    try {
      parsed = LiveChangeSchema.parse(JSON.parse(message));
    } catch {
      this.deps.logger?.warn({ message: message.slice(0, 200) }, 'unreadable live change ignored');
      return;
    }
    for (const userId of parsed.users ?? [...this.#byUser.keys()]) if (this.#byUser.has(userId)) this.#refresh(userId);
  }

  /** Reads the user's counts and sends them where they differ; changes meanwhile read once more after. */
  #refresh(userId: string): void {
    if (this.#refreshing.has(userId)) {
      this.#refreshing.set(userId, true);
      return;
    }
    this.#refreshing.set(userId, false);
    void (async () => {
      try {
        for (;;) {
          const set = this.#byUser.get(userId);
          const first = set?.values().next().value;
          if (!first || this.#closing) return;
          const counts = await this.deps.counts(first.user);
          const id = countsId(counts);
          const event = `id: ${id}\nevent: counts\ndata: ${JSON.stringify(counts)}\n\n`;
          for (const stream of this.#byUser.get(userId) ?? []) {
            if (stream.lastId === id) continue;
            stream.lastId = id;
            this.#write(stream, event);
          }
          if (!this.#refreshing.get(userId)) return;
          this.#refreshing.set(userId, false);
        }
      } catch (error) {
        this.deps.logger?.warn({ err: error, userId }, 'live counts not read');
      } finally {
        this.#refreshing.delete(userId);
      }
    })();
  }

  #beat(): void {
    const now = Date.now();
    for (const set of [...this.#byUser.values()]) {
      for (const stream of [...set]) {
        // A write waited a whole heartbeat for the client to read: it is not keeping up.
        if (stream.congestedSince !== null && now - stream.congestedSince >= this.deps.limits.heartbeatMs) this.#drop(stream, true);
        else this.#write(stream, ': heartbeat\n\n');
      }
    }
  }

  #write(stream: Stream, chunk: string): void {
    if (stream.closed) return;
    const flushed = stream.sink.write(chunk);
    if (stream.sink.writableLength > this.deps.limits.maxBufferedBytes) return this.#drop(stream, true);
    if (!flushed && stream.congestedSince === null) {
      stream.congestedSince = Date.now();
      stream.sink.once('drain', () => {
        stream.congestedSince = null;
      });
    }
  }

  /** Ends the stream: `slow` destroys it (its buffered bytes would never be read), else ends it cleanly. */
  #drop(stream: Stream, slow: boolean): void {
    if (stream.closed) return;
    if (slow) this.deps.logger?.info({ userId: stream.user.userId }, 'slow live stream dropped');
    this.#forget(stream);
    if (slow) stream.sink.destroy();
    else stream.sink.end();
  }

  #forget(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    this.#open--;
    const set = this.#byUser.get(stream.user.userId);
    set?.delete(stream);
    if (set?.size === 0) this.#byUser.delete(stream.user.userId);
  }
}
