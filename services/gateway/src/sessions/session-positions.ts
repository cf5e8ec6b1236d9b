import { mergePositions, parsePositions, formatPositions, type Cache, type LogPosition } from '@castie/platform';

/**
 * Where each user's last writes landed in the log (rule 6). The gateway sends these positions
 * with the user's next requests, and the answering service waits until its read models have
 * applied them. Kept in the cache port so several gateways share them (Redis in the cluster).
 */
export class SessionPositions {
  constructor(
    private readonly cache: Cache,
    private readonly ttlMs = 60_000,
  ) {}

  async get(userId: string): Promise<LogPosition[]> {
    return parsePositions((await this.cache.get(`session:${userId}`)) ?? undefined);
  }

  async add(userId: string, positions: readonly LogPosition[]): Promise<void> {
    if (positions.length === 0) return;
    const merged = mergePositions(await this.get(userId), positions);
    await this.cache.set(`session:${userId}`, formatPositions(merged), this.ttlMs);
  }
}
