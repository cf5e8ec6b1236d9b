import { DomainError, internalHeaders, type Endpoint } from '@castie/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { LogPosition } from '../ports/event-log.ts';
import { validationError } from './errors.ts';
import { formatPositions, mergePositions } from './positions.ts';
import type { RepeatedAnswers } from './repeated-answers.ts';

/** The authenticated user as the gateway vouches for it. */
export interface Caller {
  userId: string;
  handle: string;
  email: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface RouteContext<E extends Endpoint<any, any, any, any, any>> {
  params: z.output<E['params']>;
  query: z.output<E['query']>;
  body: z.output<E['body']>;
  /** Present on endpoints with access `user`. */
  caller: E['access'] extends 'user' ? Caller : Caller | null;
  request: FastifyRequest;
  reply: FastifyReply;
  /**
   * Records where this request's events landed, so the user's next request can wait for them.
   * A request without credentials that writes for one user (a sign-up step) names that user.
   */
  wrote(positions: readonly LogPosition[], forUserId?: string): void;
  /**
   * Says that time alone changes this answer at `instant` (ms since the epoch; e.g. a Castie's end
   * making it answerable): a route that repeats answers (RouteOptions.repeatable) makes it anew
   * from then on.
   */
  validUntil(instant: number): void;
}

/**
 * JSON text that stands for a value of type `T`, written into a response as it is: for parts
 * of an answer kept serialized (see CastieObjects). The route checks the whole answer against
 * the contract when responses are checked, so it is held to the same schema as any value.
 */
export class RawJson<T> {
  declare readonly value?: T;
  /**
   * The text in pieces, written in this order. A large answer (a feed page: 100 Castie objects,
   * some 1,000 pieces) is joined once, into the response, instead of being concatenated piece
   * by piece: each `+=` left a rope node behind, and the rope was copied flat again when the
   * response was written.
   */
  readonly parts: readonly string[];

  constructor(text: string | readonly string[]) {
    this.parts = typeof text === 'string' ? [text] : text;
  }
}

type Success<E extends Endpoint<any, any, any, any, any>> = Omit<z.input<E['response']>, 'status'>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The success body without `status`, which the route adds; any top-level member may be RawJson. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RouteResult<E extends Endpoint<any, any, any, any, any>> = { [K in keyof Success<E>]: Success<E>[K] | RawJson<Success<E>[K]> };

/** `{"status":200,...}` with RawJson members written as they are (undefined ones left out, as JSON.stringify does). */
function withRawMembers(result: Record<string, unknown>): string {
  let parts = ['{"status":200'];
  for (const [key, value] of Object.entries(result)) {
    if (value === undefined) continue;
    if (value instanceof RawJson) {
      parts.push(`,${JSON.stringify(key)}:`);
      parts = parts.concat(value.parts);
    } else parts.push(`,${JSON.stringify(key)}:${JSON.stringify(value)}`);
  }
  parts.push('}');
  return parts.join('');
}

export interface RouteOptions {
  /** Validate every response against the contract (tests; cheap enough to keep on). */
  checkResponses?: boolean;
  /**
   * The topics whose read models the handler reads; a request waits for its session's positions
   * (rule 6) in these only. Unset: every topic. A write decided on its event streams names just
   * the read models it consults, so an author's next write does not wait for the projections of
   * their last one (their next read still does).
   */
  sessionTopics?: readonly string[];
  /**
   * A GET whose answer depends on the caller, the URL, the read models in the store these
   * answers follow, and time (`validUntil`) only, and whose handler sets no headers: the same
   * caller asking the same URL again gets the answer it got, as long as that store committed
   * nothing since (see RepeatedAnswers). Not for a route that reads anything else (the cache
   * port, Redis sorted sets, another store).
   */
  repeatable?: RepeatedAnswers;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** See RouteOptions.sessionTopics. */
    sessionTopics?: readonly string[];
  }
}

function callerOf(request: FastifyRequest): Caller | null {
  const userId = request.headers[internalHeaders.userId];
  const handle = request.headers[internalHeaders.handle];
  const email = request.headers[internalHeaders.email];
  if (typeof userId !== 'string' || typeof handle !== 'string' || typeof email !== 'string') return null;
  // The gateway percent-encodes both; most need no decoding.
  return { userId, handle: handle.includes('%') ? decodeURIComponent(handle) : handle, email: email.includes('%') ? decodeURIComponent(email) : email };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function checkResponse(endpoint: Endpoint<any, any, any, any, any>, url: string, body: unknown): void {
  const checked = endpoint.response.safeParse(body);
  if (!checked.success) throw new Error(`response of ${endpoint.method} ${url} breaks its contract: ${checked.error.message}`);
}

function parse<S extends z.ZodType>(schema: S, input: unknown, endpoint: Pick<Endpoint, 'invalidAs'>): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) throw validationError(result.error, input, endpoint.invalidAs ?? 'missing_request_data');
  return result.data;
}

/**
 * Registers the handler of one contract endpoint on every one of its paths: parameters, query
 * and body are parsed by the contract's schemas (never cast by hand), the caller is required
 * where the endpoint needs one, and the answer gets `status: 200`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function route<E extends Endpoint<any, any, any, any, any>>(
  app: FastifyInstance,
  endpoint: E,
  handler: (ctx: RouteContext<E>) => Promise<RouteResult<E>>,
  options: RouteOptions = {},
): void {
  for (const url of endpoint.paths) {
    app.route({
      method: endpoint.method,
      url,
      ...(options.sessionTopics ? { config: { sessionTopics: options.sessionTopics } } : {}),
      handler: async (request, reply) => {
        const caller = callerOf(request);
        if (endpoint.access === 'user' && !caller) throw new DomainError('authentication_failed', 'credentials are required');
        const repeated = options.repeatable && request.method === 'GET' ? options.repeatable : null;
        const key = repeated ? `${caller?.userId ?? ''}\n${caller?.handle ?? ''}\n${request.url}` : '';
        const again = repeated?.find(key);
        if (again !== undefined) {
          if (options.checkResponses) checkResponse(endpoint, url, JSON.parse(again.toString('utf8')));
          reply.type('application/json; charset=utf-8');
          return again;
        }
        const making = repeated?.begin() ?? null;
        let until = Infinity;
        let written: LogPosition[] = [];
        let writtenFor: string | null = null;
        const ctx = {
          params: parse(endpoint.params, request.params, endpoint),
          query: parse(endpoint.query, request.query, endpoint),
          body: parse(endpoint.body, request.body, endpoint),
          caller,
          request,
          reply,
          wrote: (positions: readonly LogPosition[], forUserId?: string) => {
            if (forUserId !== undefined) {
              if (writtenFor !== null && writtenFor !== forUserId) throw new Error(`one request writes for one user, not for ${writtenFor} and ${forUserId}`);
              writtenFor = forUserId;
            }
            written = mergePositions(written, positions);
          },
          validUntil: (instant: number) => {
            until = Math.min(until, instant);
          },
        } as RouteContext<E>;
        const result = (await handler(ctx)) as Record<string, unknown>;
        const raw = Object.values(result).some((v) => v instanceof RawJson);
        // A repeated answer is kept as the text it is sent as.
        const text = raw ? withRawMembers(result) : making !== null ? JSON.stringify({ status: 200, ...result }) : null;
        const body = text === null ? { status: 200, ...result } : text;
        if (options.checkResponses) checkResponse(endpoint, url, text === null ? body : JSON.parse(text));
        if (written.length > 0) reply.header(internalHeaders.written, formatPositions(written));
        // A signed-in caller's writes are the caller's: the gateway knows whose they are.
        if (written.length > 0 && writtenFor !== null && !caller) reply.header(internalHeaders.writtenFor, writtenFor);
        if (text !== null) reply.type('application/json; charset=utf-8');
        if (making === null || text === null || written.length > 0) return body;
        // Sent as the bytes it is kept as (RepeatedAnswers), so it is encoded once.
        return repeated!.keep(key, making, Buffer.from(text, 'utf8'), until);
      },
    });
  }
}
