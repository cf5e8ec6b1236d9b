import { formatPositions, mergePositions, parsePositions, type Cache, type LogPosition } from '@castie/platform';

/**
 * Where each user's last writes landed in the log (rule 6). The gateway sends these positions
 * with the user's next requests, and the answering service waits until its read models have
 * applied them. Kept in the cache port so several gateways share them (Redis in the cluster).
 */
export class SessionPositions {
  /** Per user, the last pending update: concurrent writes of one user merge one after another. */
  readonly #pending = new Map<string, Promise<void>>();

  constructor(
    private readonly cache: Cache,
    private readonly ttlMs = 60_000,
  ) {}

  async get(userId: string): Promise<LogPosition[]> {
    return parsePositions((await this.cache.get(SessionPositions.keyOf(userId))) ?? undefined);
  }

  /** The cache key of a user's positions (for a caller reading it with other keys at once; `parsePositions` reads the value). */
  static keyOf(userId: string): string {
    return `session:${userId}`;
  }

  /**
   * Merges positions in (highest offset per partition). Read-merge-write is serialized per user
   * within this gateway, so two concurrent writes of one user cannot drop each other's position.
   * (Across several gateways the cache would need an atomic max: see the cluster notes.)
   */
  add(userId: string, positions: readonly LogPosition[]): Promise<void> {
    if (positions.length === 0) return Promise.resolve();
    const previous = this.#pending.get(userId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const merged = mergePositions(await this.get(userId), positions);
      await this.cache.set(SessionPositions.keyOf(userId), formatPositions(merged), this.ttlMs);
    });
    const settled = next.catch(() => undefined);
    this.#pending.set(userId, settled);
    void settled.then(() => {
      if (this.#pending.get(userId) === settled) this.#pending.delete(userId);
    });
    return next;
  }
}
