import { randomBytes } from 'node:crypto';
import { loggedByCaller } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { request as httpRequest } from 'undici';

export interface ServiceRequest {
  method: string;
  /** Path and query string, e.g. `/api/home/new/?ids=true`. */
  url: string;
  headers: Record<string, string>;
  /** JSON body (already parsed form fields), if any. */
  body?: unknown;
}

export interface ServiceResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes, or (in process) the text the service answered, handed over as it is. */
  body: Buffer | string;
}

/** A service's answer as text (JSON answers are UTF-8). */
export const bodyText = (res: Pick<ServiceResponse, 'body'>): string => (typeof res.body === 'string' ? res.body : res.body.toString('utf8'));

/**
 * How the gateway reaches a service: the same HTTP contract either way. Embedded: in process
 * through Fastify's inject (no socket); cluster: over the network.
 */
export interface ServiceClient {
  request(req: ServiceRequest): Promise<ServiceResponse>;
}

/**
 * The in-process client of a service app. The first client of an app must be made before the app
 * is ready (it adds a hook); later ones (a second gateway in the same process) share it.
 *
 * Its requests go through Fastify's inject, so they meet the same routes, hooks and error handling
 * as over HTTP, but a whole answer is handed over as the string or Buffer the service made instead
 * of as bytes copied through a response: light-my-request encodes a text payload into a Buffer
 * twice, concatenates the chunks and decodes them again (measured: 1.4 ms of a 94 KB home page's
 * 4.3 ms in the casties service, a third of it garbage collection), and copies and decodes a
 * Buffer too (an answer the service keeps as bytes, see RepeatedAnswers, is then written to the
 * socket as it is, never encoded again). The service's `onSend` hook keeps such a payload aside
 * for the response it belongs to and sends an empty body; the client picks it up. Only requests
 * carrying the app's handover token (random, never seen outside the process) are answered so;
 * anything else injected into the app (tests) gets its bytes as usual, and streams always go as
 * bytes. The same hook marks the request as logged by its caller: the
 * gateway writes the request's line, the service's own goes to debug.
 */
export function inProcessClient(app: FastifyInstance): ServiceClient {
  const token = handoverTokenOf(app);
  return {
    async request(req) {
      const headers = { ...req.headers, [IN_PROCESS]: token, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) };
      const res = await app.inject({ method: req.method as 'GET', url: req.url, headers, ...(req.body === undefined ? {} : { payload: JSON.stringify(req.body) }) });
      const raw = res.raw.res as HandedOver;
      const handed = raw[HANDED_OVER];
      raw[HANDED_OVER] = undefined;
      const { 'content-length': _length, ...rest } = res.headers;
      return { statusCode: res.statusCode, headers: (handed === undefined ? res.headers : rest) as ServiceResponse['headers'], body: handed ?? res.rawPayload };
    },
  };
}

/**
 * Where an answer waits for the client: on the response it belongs to, taken off by the
 * client at once. An injected request's response object outlives the request in the heap (it is
 * still reached from older objects when the next young-generation collection runs), and while it
 * pointed to the answer, every answer was copied and promoted to the old generation with it: on
 * the home page (94 KB), a quarter of the server's time went to those collections. Measured with
 * a bare Fastify app answering 90 KB through inject, 3,000 requests, twice: answers left on the
 * response promoted 261 MB and paused 1.05-1.09 s in scavenges; taken off, 23 MB and 0.20-0.28 s,
 * and each request took half the time. (A WeakMap by response, as before, kept them as long.)
 */
const HANDED_OVER = Symbol('castie.handedOver');
type HandedOver = { [HANDED_OVER]?: string | Buffer };
/** Each app's handover token, made with its hook by its first client. */
const tokens = new WeakMap<FastifyInstance, string>();

function handoverTokenOf(app: FastifyInstance): string {
  const known = tokens.get(app);
  if (known) return known;
  const token = randomBytes(16).toString('hex');
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.headers[IN_PROCESS] !== token) return done(null, payload);
    // The gateway logs the request in the same log, under the same id: the service's own
    // line goes to debug (errors are logged as always).
    loggedByCaller(request);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    (reply.raw as HandedOver)[HANDED_OVER] = payload;
    done(null, '');
  });
  tokens.set(app, token);
  return token;
}

/** The header that marks the in-process client's own requests (its value is the client's token). */
const IN_PROCESS = 'x-castie-in-process';

export function httpClient(baseUrl: string): ServiceClient {
  // The service's origin, joined with the path as text: resolving the client's path as a relative
  // URL would send `//elsewhere/api/…` (which the router accepts, duplicate slashes ignored) to
  // the host `elsewhere`, with the user's internal headers.
  const origin = new URL(baseUrl).origin;
  return {
    async request(req) {
      const res = await httpRequest(`${origin}/${req.url.replace(/^\/+/, '')}`, {
        method: req.method as 'GET',
        headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json' },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return { statusCode: res.statusCode, headers: res.headers, body };
    },
  };
}
