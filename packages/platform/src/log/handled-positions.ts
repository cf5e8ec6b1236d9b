import { positionKey, type LogPosition, type LogRecord } from '../ports/event-log.ts';

interface Waiter {
  need: Map<string, number>;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

/**
 * What a subscription has handled, per `topic:partition`, and who waits for it: the part of
 * `Subscription` that every event log adapter shares (handled(), waitFor()).
 */
export class HandledPositions {
  readonly offsets = new Map<string, number>();
  readonly #waiters = new Set<Waiter>();
  #closed = false;

  /** `topics`: the topics the subscription reads; positions of others are ignored by waitFor. */
  constructor(private readonly topics: ReadonlySet<string>) {}

  /** Records that everything up to `offset` of `key` (`topic:partition`) is handled. */
  mark(key: string, offset: number): void {
    this.offsets.set(key, offset);
    for (const waiter of this.#waiters) {
      if (!this.reached(waiter.need)) continue;
      clearTimeout(waiter.timer);
      this.#waiters.delete(waiter);
      waiter.resolve(true);
    }
  }

  private reached(need: Map<string, number>): boolean {
    for (const [key, offset] of need) if ((this.offsets.get(key) ?? -1) < offset) return false;
    return true;
  }

  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean> {
    const need = new Map<string, number>();
    for (const p of positions) {
      if (!this.topics.has(p.topic)) continue;
      const key = positionKey(p);
      need.set(key, Math.max(need.get(key) ?? -1, p.offset));
    }
    if (this.reached(need)) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        need,
        resolve,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  /** The subscription stopped: every waiter learns it will not be reached. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.#waiters.clear();
  }
}

/** Pauses between retries that stopping a subscription cuts short. */
export class Pauses {
  readonly #pending = new Set<() => void>();

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#pending.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#pending.add(done);
    });
  }

  cutAll(): void {
    for (const cut of [...this.#pending]) cut();
  }
}

/**
 * Hands a batch to `handle` until it succeeds (at-least-once: a throw means redelivery), pausing
 * 50 ms, doubling to 1 s, between tries. False when the subscription stopped first.
 */
export async function deliverUntilHandled(
  handle: (records: LogRecord[]) => Promise<void>,
  records: LogRecord[],
  options: { pauses: Pauses; stopping: () => boolean; warn: (message: string) => void; describe: string; betweenTries?: () => Promise<void> },
): Promise<boolean> {
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      await handle(records);
      return true;
    } catch (err) {
      options.warn(`${options.describe} failed, retrying in ${pause}ms: ${err instanceof Error ? err.message : String(err)}`);
      if (!options.stopping()) await options.pauses.wait(pause);
      if (options.stopping()) return false;
      await options.betweenTries?.().catch(() => {});
    }
  }
}
