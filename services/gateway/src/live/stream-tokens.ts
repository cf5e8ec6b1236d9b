import { AuthenticatedUserSchema, type AuthenticatedUser } from '@castie/contracts';
import type { Cache } from '@castie/platform';
import { createHash, randomBytes } from 'node:crypto';

const keyOf = (token: string) => `live-token:${createHash('sha256').update(token).digest('base64url')}`;

/**
 * Short-lived tokens that open live streams for browsers, whose EventSource cannot send an
 * Authorization header. A token is 32 random bytes; the cache (Redis in the cluster, so any
 * gateway accepts it) keeps only its hash, with the user it opens streams for, until it expires.
 * It stays usable until then, so EventSource's own reconnects work; a stream it opened stays open.
 * An unknown, forged or expired token opens nothing.
 */
export class StreamTokens {
  constructor(
    private readonly cache: Cache,
    private readonly lifetimeSeconds: number,
  ) {}

  async issue(user: AuthenticatedUser): Promise<{ token: string; expires_in: number }> {
    const token = randomBytes(32).toString('base64url');
    await this.cache.set(keyOf(token), JSON.stringify(user), this.lifetimeSeconds * 1000);
    return { token, expires_in: this.lifetimeSeconds };
  }

  async userOf(token: string): Promise<AuthenticatedUser | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const stored = await this.cache.get(keyOf(token));
    if (!stored) return null;
    const user = AuthenticatedUserSchema.safeParse(JSON.parse(stored));
    return user.success ? user.data : null;
  }
}
