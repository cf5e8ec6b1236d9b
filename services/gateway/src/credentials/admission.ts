import { DomainError, messages, type AuthenticatedUser } from '@castie/contracts';
import { CredentialStamps, parsePositions, type Cache, type LogPosition } from '@castie/platform';
import type { AbuseGuard } from '../abuse/limits.ts';
import { SessionPositions } from '../sessions/session-positions.ts';
import { presentedCredentials, type VerifiedCredentials } from './credentials.ts';

/** A request's user, and where their last writes landed in the log. */
export interface Admitted {
  user: AuthenticatedUser;
  after: LogPosition[];
}

/** What admission reads of a request. */
export interface AdmissionRequest {
  headers: { authorization?: string | undefined };
  /** The client address the locks count. */
  ip: string;
  id: string;
}

/** The cache's answers for a signed-in request whose credentials this gateway kept: one round. */
interface Round {
  accountLock: number | null;
  addressLock: number | null;
  stamp: string | null;
  /** The user's requests in this window, this one included. */
  budget: number;
  session: string | null;
}

/**
 * Who a request is for: the user its credentials (HTTP Basic, or `username`/`password` body
 * fields) open, and where their last writes landed (sent on as `x-castie-after`); 401 otherwise,
 * and 429 while the account or the client address is locked after repeated failures, or past the
 * user's request budget.
 *
 * Credentials this gateway kept (the common case: a signed-in app) take one round of cache reads,
 * made together: the locks, the person's credential stamp, the budget and the session positions
 * (in the cluster, one round trip to Redis where they were four in turn). A cache in this process
 * (`Cache.inProcess`) answers them at once, without a promise: through async calls they cost a
 * signed-in request about a third of its time in the embedded gateway. Were the kept answer
 * stale, identity is asked as for unknown credentials: locks first, then identity, then budget
 * and positions. A stale answer's budget was already counted for the user it named; it is not
 * counted twice when identity vouches for the same user again.
 */
export class Admission {
  constructor(
    private readonly cache: Cache,
    private readonly credentials: VerifiedCredentials,
    private readonly guard: AbuseGuard,
    private readonly sessions: SessionPositions,
  ) {}

  /** Fields `username` and `password` are taken out of `body` (never forwarded). */
  async admit(request: AdmissionRequest, body: Record<string, unknown>): Promise<Admitted> {
    const presented = presentedCredentials(request.headers.authorization, body);
    if (!presented) throw new DomainError('authentication_failed', messages.authenticationFailed);
    if (presented.inBody) {
      delete body.username;
      delete body.password;
    }
    const kept = this.credentials.kept(presented);
    let counted: { userId: string; round: Round } | null = null;
    if (kept) {
      const userId = kept.user.userId;
      const reads = this.#round(presented.email, request.ip, userId);
      const round = reads instanceof Promise ? await reads : reads;
      this.guard.refuseWhileLocked(round.accountLock, round.addressLock);
      if (this.credentials.holds(kept, round.stamp)) {
        if (!this.guard.withinBudget(round.budget)) await this.guard.refuseOverBudget(userId);
        return { user: kept.user, after: parsePositions(round.session ?? undefined) };
      }
      counted = { userId, round };
    } else await this.guard.beforeCredentials(presented.email, request.ip);
    const user = await this.credentials.verify(presented, request.id);
    if (!user) {
      await this.guard.credentialsFailed(presented.email, request.ip);
      throw new DomainError('authentication_failed', messages.authenticationFailed);
    }
    if (counted?.userId === user.userId) {
      if (!this.guard.withinBudget(counted.round.budget)) await this.guard.refuseOverBudget(user.userId);
      return { user, after: parsePositions(counted.round.session ?? undefined) };
    }
    const [, after] = await Promise.all([this.guard.userRequest(user.userId), this.sessions.get(user.userId)]);
    return { user, after };
  }

  /** The round of reads for kept credentials: at once from a cache in this process, else together. */
  #round(email: string, address: string, userId: string): Round | Promise<Round> {
    const [accountKey, addressKey] = this.guard.lockKeys(email, address);
    const budgetKey = this.guard.budgetKey(userId);
    const { budgetWindowMs } = this.guard;
    const stampKey = CredentialStamps.keyOf(userId);
    const sessionKey = SessionPositions.keyOf(userId);
    const now = this.cache.inProcess;
    if (now) {
      return { accountLock: now.ttl(accountKey), addressLock: now.ttl(addressKey), stamp: now.get(stampKey), budget: now.increment(budgetKey, budgetWindowMs), session: now.get(sessionKey) };
    }
    const { cache } = this;
    return Promise.all([cache.ttl(accountKey), cache.ttl(addressKey), cache.get(stampKey), cache.increment(budgetKey, budgetWindowMs), cache.get(sessionKey)]).then(
      ([accountLock, addressLock, stamp, budget, session]) => ({ accountLock, addressLock, stamp, budget, session }),
    );
  }
}
