import { z } from 'zod';
import type { ErrorType } from '../errors.ts';

export const serviceNames = ['identity', 'groups', 'casties', 'social', 'notifications'] as const;
export type ServiceName = (typeof serviceNames)[number];

/**
 * Who may call an endpoint: `user` needs valid credentials (HTTP Basic or username/password in
 * the body); `none` is open (sign-up, password reset).
 */
export type Access = 'user' | 'none';

/**
 * One endpoint of the public API: where it lives, who answers it and the schemas of what goes in
 * and out. The gateway routes by it and the owning service registers its handler by it, so the
 * contract is written once.
 */
export interface Endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  A extends Access = Access,
> {
  method: 'GET' | 'POST';
  /** Fastify-style paths (`/api/casties/:uuid/`); several when a segment is optional. */
  paths: readonly string[];
  service: ServiceName;
  access: A;
  params: P;
  query: Q;
  body: B;
  response: R;
  /** Multipart fields that carry files (profile pictures, icons). */
  uploads?: readonly string[];
  /** error_type for a parameter that is present but unacceptable (default missing_request_data). */
  invalidAs?: ErrorType;
}

const empty = z.object({});

export function endpoint<
  A extends Access,
  P extends z.ZodType = typeof empty,
  Q extends z.ZodType = typeof empty,
  B extends z.ZodType = typeof empty,
  R extends z.ZodType = z.ZodType,
>(
  def: Pick<Endpoint<P, Q, B, R, A>, 'method' | 'paths' | 'service' | 'access' | 'response'> & Partial<Pick<Endpoint<P, Q, B, R, A>, 'params' | 'query' | 'body' | 'uploads' | 'invalidAs'>>,
): Endpoint<P, Q, B, R, A> {
  return { params: empty as unknown as P, query: empty as unknown as Q, body: empty as unknown as B, ...def };
}

/** Every success body carries status 200. */
export const ok = <S extends z.ZodRawShape>(shape: S) => z.object({ status: z.literal(200), ...shape });

/**
 * Headers the gateway sets for the services behind it. Services trust them because only the
 * gateway is reachable from outside (an internal network or the same process).
 */
export const internalHeaders = {
  userId: 'x-castie-user-id',
  handle: 'x-castie-user-handle',
  email: 'x-castie-user-email',
  /** Log positions the answering service must have applied first (session consistency). */
  after: 'x-castie-after',
  /** Log positions of the events a write appended (set by services on their responses). */
  written: 'x-castie-written',
  /**
   * Whose writes `written` holds, set by services on the answer to a request without credentials
   * that wrote for one user (the sign-up steps): the gateway keeps those positions for that
   * user's next requests, as it does for a signed-in user's own writes.
   */
  writtenFor: 'x-castie-written-for',
  /** Set by the gateway on /admin/ requests once it checked the operator's bearer token. */
  admin: 'x-castie-admin',
} as const;
