import { randomUUID } from 'node:crypto';
import type { Cache } from '../ports/cache.ts';

/**
 * A stamp per person that changes whenever what their credentials open changes (password,
 * e-mail, handle, deletion): identity writes a new one around every command on a person's login
 * or account, and a gateway keeps a verified credential only while the stamp it was verified
 * under is still the current one. Kept in the cache port, so every gateway sees a change the
 * moment identity answers the command (Redis in the cluster, process memory embedded). A stamp
 * never expires. A missing one (never written, or lost with the cache) reads as null and vouches
 * for nothing: identity writes one before it vouches, so a lost stamp cannot revive old credentials.
 */
export class CredentialStamps {
  constructor(private readonly cache: Cache) {}

  current(userId: string): Promise<string | null> {
    return this.cache.get(stampKey(userId));
  }

  /** The cache key of a person's stamp (for a caller reading it with other keys at once). */
  static keyOf(userId: string): string {
    return stampKey(userId);
  }

  /** Writes a new stamp, and returns it. */
  async changed(userId: string): Promise<string> {
    const stamp = randomUUID();
    await this.cache.set(stampKey(userId), stamp);
    return stamp;
  }
}

const stampKey = (userId: string): string => `credentials:${userId}`;
