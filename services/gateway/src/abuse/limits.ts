import { RateLimited, type Cache } from '@castie/platform';

/**
 * The numbers of the abuse limits (README "Abuse limits"). Counters live in the cache port: in
 * process for the embedded profile, in Redis in the cluster, so the limits hold across gateways.
 */
export interface AbuseLimits {
  /** Failed credentials count per account (e-mail) and per client address within this window. */
  failureWindowSeconds: number;
  /** Failures of one account before it locks; each further failure doubles the lock. */
  accountFailures: number;
  /** Failures from one client address before it locks, likewise. */
  addressFailures: number;
  /** The first lock, and the longest. */
  firstLockSeconds: number;
  maxLockSeconds: number;
  /** Password-reset mails per e-mail address and per client address, per hour. */
  resetMailsPerAccount: number;
  resetMailsPerAddress: number;
  /** Sign-up requests (any step) per client address, per hour. */
  signUpsPerAddress: number;
  /** Requests per signed-in user, per minute. */
  requestsPerUserPerMinute: number;
}

export const defaultAbuseLimits: AbuseLimits = {
  failureWindowSeconds: 15 * 60,
  accountFailures: 5,
  addressFailures: 20,
  firstLockSeconds: 2,
  maxLockSeconds: 15 * 60,
  resetMailsPerAccount: 3,
  resetMailsPerAddress: 10,
  signUpsPerAddress: 60,
  requestsPerUserPerMinute: 1200,
};

const HOUR = 3600_000;
const BUDGET_SPENT = 'too many requests: slow down';

/** An account's key in the limits: its e-mail address as identity reads it (trimmed, any case), so no spelling of it counts apart. */
const accountOf = (email: string): string => email.trim().toLowerCase();

/** Guards what can be abused by repetition: credentials, reset mails, sign-ups, a user's requests. */
export class AbuseGuard {
  constructor(
    private readonly cache: Cache,
    private readonly limits: AbuseLimits = defaultAbuseLimits,
  ) {}

  /** Refuses (429) while the account or the client address is locked after failed credentials. */
  async beforeCredentials(email: string, address: string): Promise<void> {
    const [accountKey, addressKey] = this.lockKeys(email, address);
    const [account, client] = await Promise.all([this.cache.ttl(accountKey), this.cache.ttl(addressKey)]);
    this.refuseWhileLocked(account, client);
  }

  /** The keys whose time to live is the lock of the account and of the client address (read with `ttl`). */
  lockKeys(email: string, address: string): [account: string, address: string] {
    return [`lock:account:${accountOf(email)}`, `lock:address:${address}`];
  }

  /** `beforeCredentials` once the locks' times to live were read (see `lockKeys`). */
  refuseWhileLocked(accountTtl: number | null, addressTtl: number | null): void {
    const wait = Math.max(accountTtl ?? 0, addressTtl ?? 0);
    if (wait > 0) throw new RateLimited('too many failed sign-ins: wait before trying again', Math.ceil(wait / 1000));
  }

  /**
   * Counts a failure for the account and the address; past their thresholds each failure locks
   * them for twice as long as the one before (exponential back-off), up to the longest lock.
   */
  async credentialsFailed(email: string, address: string): Promise<void> {
    const window = this.limits.failureWindowSeconds * 1000;
    const [account, client] = await Promise.all([this.cache.increment(`failures:account:${accountOf(email)}`, window), this.cache.increment(`failures:address:${address}`, window)]);
    await Promise.all([this.lockPast(`lock:account:${accountOf(email)}`, account, this.limits.accountFailures), this.lockPast(`lock:address:${address}`, client, this.limits.addressFailures)]);
  }

  private async lockPast(key: string, failures: number, threshold: number): Promise<void> {
    if (failures < threshold) return;
    const seconds = Math.min(this.limits.maxLockSeconds, this.limits.firstLockSeconds * 2 ** (failures - threshold));
    await this.cache.set(key, '1', seconds * 1000);
  }

  /** A password-reset mail asked for: limited per e-mail address and per client address, per hour. */
  async resetMail(email: string, address: string): Promise<void> {
    await this.within(`reset:account:${accountOf(email)}`, this.limits.resetMailsPerAccount, HOUR, 'too many password-reset mails for this address: wait before asking again');
    await this.within(`reset:address:${address}`, this.limits.resetMailsPerAddress, HOUR, 'too many password-reset mails asked from here: wait before asking again');
  }

  /** A sign-up step from a client address. */
  async signUpStep(address: string): Promise<void> {
    await this.within(`signup:address:${address}`, this.limits.signUpsPerAddress, HOUR, 'too many sign-up requests from here: wait before trying again');
  }

  /** A signed-in user's request. */
  async userRequest(userId: string): Promise<void> {
    await this.within(this.budgetKey(userId), this.limits.requestsPerUserPerMinute, this.budgetWindowMs, BUDGET_SPENT);
  }

  /**
   * `userRequest` in two steps, for a caller that counts the request itself along with other
   * reads: `increment(budgetKey(userId), budgetWindowMs)`, then `withinBudget(count)`, and when
   * it is not, `refuseOverBudget`.
   */
  budgetKey(userId: string): string {
    return `budget:user:${userId}`;
  }

  readonly budgetWindowMs = 60_000;

  withinBudget(count: number): boolean {
    return count <= this.limits.requestsPerUserPerMinute;
  }

  /** Refuses (429) a request past the user's budget, saying when the window ends. */
  async refuseOverBudget(userId: string): Promise<never> {
    return this.refuse(this.budgetKey(userId), this.budgetWindowMs, BUDGET_SPENT);
  }

  private async within(key: string, limit: number, windowMs: number, message: string): Promise<void> {
    const count = await this.cache.increment(key, windowMs);
    if (count <= limit) return;
    await this.refuse(key, windowMs, message);
  }

  private async refuse(key: string, windowMs: number, message: string): Promise<never> {
    const left = (await this.cache.ttl(key)) ?? windowMs;
    throw new RateLimited(message, Math.max(1, Math.ceil(left / 1000)));
  }
}
