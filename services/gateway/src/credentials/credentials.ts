import { VerifiedCredentialsSchema, type AuthenticatedUser } from '@castie/contracts';
import { CredentialStamps, Unavailable, type Cache, type ServiceMetrics } from '@castie/platform';
import * as crypto from 'node:crypto';
import { bodyText, type ServiceClient } from '../routing/service-client.ts';

export interface Presented {
  email: string;
  password: string;
  /** True when they came as `username`/`password` body fields (which are then not forwarded). */
  inBody: boolean;
}

/** Credentials from HTTP Basic, else from `username` and `password` body fields (decisions.md). */
export function presentedCredentials(authorization: string | undefined, body: Record<string, unknown>): Presented | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { email: decoded.slice(0, colon), password: decoded.slice(colon + 1), inBody: false };
  }
  const { username, password } = body;
  if (typeof username === 'string' && typeof password === 'string' && username && password) return { email: username, password, inBody: true };
  return null;
}

const oneShotHash: typeof crypto.hash | undefined = (crypto as Partial<typeof crypto>).hash;

/** What this gateway kept for presented credentials: whom identity vouched for, under which stamp. */
export interface KeptAnswer {
  /** The digest of the credentials it is kept under. */
  readonly key: string;
  readonly user: AuthenticatedUser;
  /** The person's credential stamp identity vouched under. */
  readonly stamp: string;
  readonly expiresAt: number;
}

/**
 * Who presented these credentials. Identity owns credentials and checks them; this gateway keeps
 * what identity vouched for, under a digest of the presented credentials (with a secret of this
 * process: never the password itself), for as long as the person's credential stamp is the one
 * identity vouched under (see CredentialStamps). Identity writes a new stamp around every change
 * to a login or an account, before it answers, so a changed password, e-mail or handle and a
 * deleted account count from the very next request, through any gateway. A kept answer costs one
 * cache read (process memory embedded, one Redis GET in the cluster) instead of a call to identity.
 * Refusals are never kept: they go to identity (and its argon2 cost) every time.
 *
 * `userOf` does it all in turn. A caller with other cache reads to make for the same request
 * (the gateway's Admission: locks, budget, session positions) asks `kept`, reads the stamp
 * (`CredentialStamps.keyOf`) together with them, and settles with `holds`, else `verify`: one
 * round trip to the cache instead of one per step.
 */
export class VerifiedCredentials {
  readonly #kept = new Map<string, KeptAnswer>();
  readonly #secret = crypto.randomBytes(32).toString('base64');
  readonly #stamps: CredentialStamps;
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #observer: Pick<ServiceMetrics, 'credentialCacheLookup'> | undefined;

  constructor(
    /** The identity service's client (asked for when first needed). */
    private readonly identity: () => ServiceClient,
    cache: Cache,
    options: { maxEntries?: number; ttlMs?: number; observer?: Pick<ServiceMetrics, 'credentialCacheLookup'> } = {},
  ) {
    this.#observer = options.observer;
    this.#stamps = new CredentialStamps(cache);
    this.#maxEntries = options.maxEntries ?? 50_000;
    this.#ttlMs = options.ttlMs ?? 5 * 60_000;
  }

  /** The user the credentials open, or null. */
  async userOf(presented: Presented, requestId: string, now = Date.now()): Promise<AuthenticatedUser | null> {
    const kept = this.kept(presented, now);
    if (kept && this.holds(kept, await this.currentStamp(kept.user.userId))) return kept.user;
    return this.verify(presented, requestId, now);
  }

  /** The answer kept for these credentials and not expired, without asking the cache or identity; null when there is none. */
  kept(presented: Presented, now = Date.now()): KeptAnswer | null {
    const key = this.keyOf(presented);
    const kept = this.#kept.get(key);
    if (!kept) return null;
    if (kept.expiresAt <= now) {
      this.#kept.delete(key);
      return null;
    }
    return kept;
  }

  /**
   * Whether an answer `kept` gave is still the one kept, and not expired: for a caller that
   * remembers it between requests instead of hashing the same credentials again (Admission, per
   * connection). A forgotten answer (a stamp that no longer held, a newer answer, evicted) is not.
   */
  stillKept(kept: KeptAnswer, now = Date.now()): boolean {
    return kept.expiresAt > now && this.#kept.get(kept.key) === kept;
  }

  /** The person's credential stamp now (one cache read). */
  currentStamp(userId: string): Promise<string | null> {
    return this.#stamps.current(userId);
  }

  /** Whether a kept answer still stands under the person's current stamp; one that does not is forgotten (then `verify`). */
  holds(kept: KeptAnswer, currentStamp: string | null): boolean {
    if (kept.stamp === currentStamp) {
      this.#observer?.credentialCacheLookup(true);
      return true;
    }
    this.#kept.delete(kept.key);
    return false;
  }

  /** Asks identity (nothing kept, or what was kept no longer stands), and keeps what it vouches for. */
  async verify(presented: Presented, requestId: string, now = Date.now()): Promise<AuthenticatedUser | null> {
    this.#observer?.credentialCacheLookup(false);
    const res = await this.identity().request({ method: 'POST', url: '/internal/authenticate', headers: { 'x-request-id': requestId }, body: { email: presented.email, password: presented.password } });
    // A failure of identity (5xx: down, rebuilding) is not the caller's: counted as a failed
    // sign-in it would lock people out while identity is away. Any refusal (401, or 4xx for
    // credentials it cannot read) opens nothing.
    if (res.statusCode >= 500) {
      const retryAfter = Number(res.headers['retry-after']);
      throw new Unavailable(`signing in is briefly unavailable (identity answered ${res.statusCode}); try again in a moment`, Number.isInteger(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 60) : 1);
    }
    if (res.statusCode !== 200) return null;
    const verified = VerifiedCredentialsSchema.safeParse(JSON.parse(bodyText(res)));
    if (!verified.success) return null;
    const { user, stamp } = verified.data;
    if (stamp !== null) {
      const key = this.keyOf(presented);
      this.keep({ key, user, stamp, expiresAt: now + this.#ttlMs });
    }
    return user;
  }

  /**
   * The key of kept answers: a SHA-256 of this process's secret and the credentials, never the
   * password itself. Not an HMAC: the digest is only compared for equality inside this process,
   * so HMAC's defence against length extension buys nothing here, and creating an HMAC costs
   * about 1.5 µs against 0.3 µs (3 % of a feed page through the gateway). The e-mail's length
   * keeps e-mail and password apart (`a` + `b:c` is not `a:b` + `c`).
   */
  private keyOf(presented: Presented): string {
    const email = presented.email.trim().toLowerCase();
    const text = `${this.#secret}\0${email.length}:${email}\0${presented.password}`;
    // crypto.hash (Node 20.12 and later) hashes in one call: half the time of createHash's three.
    return oneShotHash ? oneShotHash('sha256', text, 'base64url') : crypto.createHash('sha256').update(text).digest('base64url');
  }

  private keep(entry: KeptAnswer): void {
    if (this.#kept.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#kept.keys().next().value;
      if (oldest !== undefined) this.#kept.delete(oldest);
    }
    this.#kept.set(entry.key, entry);
  }
}
