import type { VerifiedCredentials } from '@castie/contracts';
import type { CommandHandler, CredentialStamps } from '@castie/platform';
import { createHmac, randomBytes } from 'node:crypto';
import type { AccountCommand, AccountState } from '../account/decider.ts';
import type { LoginCommand, LoginState } from '../login/decider.ts';
import type { PasswordHasher } from './passwords.ts';

interface Verified {
  userId: string;
  /** Version of the login stream when the password was checked. */
  loginVersion: number;
  expiresAt: number;
}

/** Told whether a check found the credentials verified in the cache (a hit spares argon2id). */
export interface CredentialCacheObserver {
  credentialCacheLookup(hit: boolean): void;
}

/**
 * Checks the credentials every request carries. argon2 runs once per (e-mail, password, login
 * version): the cache remembers a successful check under an HMAC of the presented credentials
 * (never the password itself), and an entry only counts while the login stream is still at the
 * version it was checked against. A password change, an e-mail change or a deletion appends to
 * that stream, so the very next request with the old credentials fails, with no invalidation
 * message to lose.
 *
 * The answer carries the person's credential stamp as it was before the check (see
 * CredentialStamps), so that a gateway may keep it until the stamp changes: the stamp is read
 * after the login is loaded, and the login is loaded again once the account is, so a change that
 * lands during the check either shows in what was read or comes with a newer stamp.
 */
export class CredentialVerifier {
  readonly #cache = new Map<string, Verified>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #observer: CredentialCacheObserver | undefined;
  /** A hash of no one's password: an unknown e-mail costs the same argon2 run as a wrong password. */
  #dummyHash: Promise<string> | null = null;

  constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly logins: CommandHandler<LoginCommand, any, LoginState>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly accounts: CommandHandler<AccountCommand, any, AccountState>,
    private readonly passwords: PasswordHasher,
    private readonly secret: string,
    private readonly stamps: CredentialStamps,
    options: { maxEntries?: number; ttlMs?: number; observer?: CredentialCacheObserver } = {},
  ) {
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#ttlMs = options.ttlMs ?? 10 * 60_000;
    this.#observer = options.observer;
  }

  /** The active account these credentials open, with the stamp they may be kept under; or null. */
  async verify(emailInput: string, password: string, now = Date.now()): Promise<VerifiedCredentials | null> {
    const email = emailInput.trim().toLowerCase();
    if (!email || !password) return null;
    const { state: login, version } = await this.logins.load(`login-${email}`);
    if (login.status !== 'open') {
      this.#dummyHash ??= this.passwords.hash(randomBytes(24).toString('base64url'));
      await this.passwords.verify(await this.#dummyHash, password);
      return null;
    }

    const stamp = (await this.stamps.current(login.userId)) ?? (await this.stamps.changed(login.userId));
    const key = createHmac('sha256', this.secret).update(email).update('\0').update(password).digest('base64url');
    const hit = this.#cache.get(key);
    const valid = hit !== undefined && hit.userId === login.userId && hit.loginVersion === version && hit.expiresAt > now;
    this.#observer?.credentialCacheLookup(valid);
    if (!valid) {
      if (hit) this.#cache.delete(key);
      if (!(await this.passwords.verify(login.passwordHash, password))) return null;
      this.remember(key, { userId: login.userId, loginVersion: version, expiresAt: now + this.#ttlMs });
    }

    const { state: account } = await this.accounts.load(`account-${login.userId}`);
    if (account.status !== 'active') return null;
    const { version: still } = await this.logins.load(`login-${email}`);
    return { user: { userId: account.userId, handle: account.handle, email }, stamp: still === version ? stamp : null };
  }

  private remember(key: string, entry: Verified): void {
    if (this.#cache.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(key, entry);
  }
}
