import { DomainError, messages, type AuthenticatedUser } from '@castie/contracts';
import { CredentialStamps, parsePositions, type Cache, type LogPosition } from '@castie/platform';
import type { AbuseGuard } from '../abuse/limits.ts';
import { SessionPositions } from '../sessions/session-positions.ts';
import { presentedCredentials, type KeptAnswer, type Presented, type VerifiedCredentials } from './credentials.ts';

/** A request's user, and where their last writes landed in the log. */
export interface Admitted {
  user: AuthenticatedUser;
  after: readonly LogPosition[];
}

/** What admission reads of a request. */
export interface AdmissionRequest {
  headers: { authorization?: string | undefined };
  /** The client address the locks count. */
  ip: string;
  id: string;
  /** The connection it came on (its HTTP Basic credentials are remembered for its next requests). */
  socket: object;
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

/** The cache keys of a round (see `#round`). */
interface RoundKeys {
  accountLock: string;
  addressLock: string;
  stamp: string;
  budget: string;
  session: string;
}

/** Credentials a connection presented in its Authorization header, as this gateway kept them. */
interface Remembered {
  /** The header, compared whole with the next request's. */
  authorization: string;
  /** The client address the keys were made for (behind a trusted proxy it can change per request). */
  address: string;
  kept: KeptAnswer;
  keys: RoundKeys;
  /** What the connection's last round read and admitted, with a cache in this process (see `#lastStands`). */
  last: LastRound | null;
}

/** A round that admitted the connection's request: no lock, the stamp holding, these positions. */
interface LastRound {
  /** The in-process cache's writes when it was read (InProcessReads.writes). */
  writes: number;
  /** When a value it read runs out of time (the stamp's or the positions' time to live), epoch ms. */
  until: number;
  after: readonly LogPosition[];
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
 *
 * A keep-alive connection sends the same Authorization header with every request. Decoding and
 * hashing it again cost a feed page through the gateway more than everything else admission
 * does (bench/gateway.ts), so each connection remembers the header it last presented with the
 * kept answer it opened and the keys of its round, until the connection closes: a request with
 * the very same header (compared whole) and address skips to the round, which checks the stamp,
 * locks and budget as for any kept credentials. The header holds the password, as the request
 * did; it is kept with the connection, never beyond it. With a cache in this process the
 * connection also keeps what its last round read, for as long as nothing is written to the cache
 * (`#lastStands`): then only the budget is counted.
 */
export class Admission {
  readonly #connections = new WeakMap<object, Remembered>();

  constructor(
    private readonly cache: Cache,
    private readonly credentials: VerifiedCredentials,
    private readonly guard: AbuseGuard,
    private readonly sessions: SessionPositions,
  ) {}

  /** Fields `username` and `password` are taken out of `body` (never forwarded). */
  async admit(request: AdmissionRequest, body: Record<string, unknown>): Promise<Admitted> {
    const now = Date.now();
    const remembered = this.#remembered(request, now);
    let presented = remembered ? null : presentedCredentials(request.headers.authorization, body);
    if (!remembered && !presented) throw new DomainError('authentication_failed', messages.authenticationFailed);
    if (presented?.inBody) {
      delete body.username;
      delete body.password;
    }
    const kept = remembered ?? (presented ? this.#kept(request, presented, now) : null);
    let counted: { userId: string; round: Round } | null = null;
    if (kept) {
      const userId = kept.kept.user.userId;
      const last = remembered && this.#lastStands(remembered, now);
      if (last) {
        // The stamp read then still stands: counted as the kept answer's hit, as a full round counts it.
        this.credentials.holds(kept.kept, kept.kept.stamp);
        if (!this.guard.withinBudget(this.cache.inProcess!.increment(kept.keys.budget, this.guard.budgetWindowMs))) await this.guard.refuseOverBudget(userId);
        return { user: kept.kept.user, after: last.after };
      }
      const reads = this.#round(kept.keys);
      const writes = this.cache.inProcess?.writes;
      const round = reads instanceof Promise ? await reads : reads;
      this.guard.refuseWhileLocked(round.accountLock, round.addressLock);
      if (this.credentials.holds(kept.kept, round.stamp)) {
        if (!this.guard.withinBudget(round.budget)) await this.guard.refuseOverBudget(userId);
        const after = Object.freeze(parsePositions(round.session ?? undefined));
        if (writes !== undefined) kept.last = { writes, until: this.#until(kept.keys, now), after };
        return { user: kept.kept.user, after };
      }
      counted = { userId, round };
      this.#connections.delete(request.socket);
    }
    // Remembered credentials came in the header: read again only now, when the kept answer no longer stands.
    presented ??= presentedCredentials(request.headers.authorization, body)!;
    if (!kept) await this.guard.beforeCredentials(presented.email, request.ip);
    const user = await this.credentials.verify(presented, request.id);
    if (!user) {
      await this.guard.credentialsFailed(presented.email, request.ip);
      throw new DomainError('authentication_failed', messages.authenticationFailed);
    }
    // The connection's next requests with this header skip to the round.
    if (!presented.inBody) this.#kept(request, presented, now);
    if (counted?.userId === user.userId) {
      if (!this.guard.withinBudget(counted.round.budget)) await this.guard.refuseOverBudget(user.userId);
      return { user, after: parsePositions(counted.round.session ?? undefined) };
    }
    const [, after] = await Promise.all([this.guard.userRequest(user.userId), this.sessions.get(user.userId)]);
    return { user, after };
  }

  /** What the request's connection remembered, when this request presents the same header from the same address and the answer is still kept. */
  #remembered(request: AdmissionRequest, now: number): Remembered | null {
    const { authorization } = request.headers;
    if (authorization === undefined) return null;
    const remembered = this.#connections.get(request.socket);
    if (!remembered) return null;
    if (remembered.authorization === authorization && remembered.address === request.ip && this.credentials.stillKept(remembered.kept, now)) return remembered;
    // Of no more use: the header (the password) is not kept for nothing.
    this.#connections.delete(request.socket);
    return null;
  }

  /** The answer kept for the credentials and the keys of its round, remembered by the connection when they came in the header; null when none is kept. */
  #kept(request: AdmissionRequest, presented: Presented, now: number): Remembered | null {
    const kept = this.credentials.kept(presented, now);
    if (!kept) return null;
    const [accountLock, addressLock] = this.guard.lockKeys(presented.email, request.ip);
    const { userId } = kept.user;
    const keys = { accountLock, addressLock, stamp: CredentialStamps.keyOf(userId), budget: this.guard.budgetKey(userId), session: SessionPositions.keyOf(userId) };
    const remembered: Remembered = { authorization: request.headers.authorization ?? '', address: request.ip, kept, keys, last: null };
    if (!presented.inBody) this.#connections.set(request.socket, remembered);
    return remembered;
  }

  /**
   * The connection's last round, when it still stands: nothing was written to the cache in this
   * process since (locks, stamps and session positions are all written with `set` or `del`), and
   * nothing it read ran out of time. Then a request is admitted as that one was, and only the
   * user's budget is counted, as for every request: a keep-alive connection of a signed-in app
   * reads nothing else while nobody writes. Any write (any user's session positions too) sends
   * every connection back to the full round once. Never across a network (Redis: one round trip
   * anyway). The five reads of a round cost a signed-in request about 1 µs in the embedded
   * gateway, a few per cent of the cheapest requests (bench gateway).
   */
  #lastStands(remembered: Remembered, now: number): LastRound | null {
    const { last } = remembered;
    const inProcess = this.cache.inProcess;
    return last && inProcess && last.writes === inProcess.writes && now < last.until ? last : null;
  }

  /** Until when the stamp and session positions a round read stay as read (their times to live). */
  #until(keys: RoundKeys, now: number): number {
    const inProcess = this.cache.inProcess!;
    return now + Math.min(inProcess.ttl(keys.stamp) ?? Infinity, inProcess.ttl(keys.session) ?? Infinity);
  }

  /** The round of reads for kept credentials: at once from a cache in this process, else together. */
  #round(keys: RoundKeys): Round | Promise<Round> {
    const { budgetWindowMs } = this.guard;
    const now = this.cache.inProcess;
    if (now) {
      return { accountLock: now.ttl(keys.accountLock), addressLock: now.ttl(keys.addressLock), stamp: now.get(keys.stamp), budget: now.increment(keys.budget, budgetWindowMs), session: now.get(keys.session) };
    }
    const { cache } = this;
    return Promise.all([cache.ttl(keys.accountLock), cache.ttl(keys.addressLock), cache.get(keys.stamp), cache.increment(keys.budget, budgetWindowMs), cache.get(keys.session)]).then(
      ([accountLock, addressLock, stamp, budget, session]) => ({ accountLock, addressLock, stamp, budget, session }),
    );
  }
}
