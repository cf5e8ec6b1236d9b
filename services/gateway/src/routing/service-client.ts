import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
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
 * A request goes to the app's own request handler (`fastify.routing`, what its HTTP server and
 * `inject` call), so it meets the same routes, hooks and error handling as over HTTP, with a
 * request and a response of Node's own classes (`IncomingMessage`, `ServerResponse`) over a
 * socket that discards what is written. Fastify's `inject` (light-my-request) did the same with
 * objects of its own, and cost more than many requests themselves: measured in a 20-line server
 * that injects one small request into a bare app per HTTP request it answers, 20,000 against
 * 70,000 requests/s, and its objects of every request were promoted to V8's old generation
 * (30 full collections in 5 s against 1), which raised the server's memory after load by tens
 * of MB. Why it is promoted only when called from an HTTP server (not from a loop) we did not find.
 *
 * A whole answer (a string or a Buffer) is handed over as the service made it instead of as bytes
 * written to the response: the service's `onSend` hook keeps it on the response and sends an
 * empty body; the client picks it up (see InProcessResponse). Only this client's responses are
 * answered so; anything else (HTTP, requests injected by tests) gets its bytes as usual. Streams
 * are written to the response and collected. The same hook marks the request as logged by its
 * caller: the gateway writes the request's line, the service's own goes to debug.
 */
export function inProcessClient(app: FastifyInstance): ServiceClient {
  handOverIn(app);
  let ready: PromiseLike<unknown> | null = null;
  return {
    async request(req) {
      await (ready ??= app.ready());
      return new Promise<ServiceResponse>((resolve, reject) => {
        const socket = new DiscardingSocket();
        const incoming = new IncomingMessage(socket as unknown as Socket);
        const body = req.body === undefined ? null : Buffer.from(JSON.stringify(req.body), 'utf8');
        incoming.method = req.method;
        incoming.url = req.url;
        incoming.httpVersion = '1.1';
        incoming.httpVersionMajor = 1;
        incoming.httpVersionMinor = 1;
        const headers: Record<string, string> = { host: 'localhost' };
        // Built with plain loops: `Object.entries(…).flat()` here was a tenth of the gateway's
        // own time per request in a profile of home following.
        const rawHeaders = ['host', 'localhost'];
        for (const name in req.headers) {
          const value = req.headers[name]!;
          headers[name.toLowerCase()] = value;
          rawHeaders.push(name, value);
        }
        if (body) {
          headers['content-type'] = 'application/json';
          headers['content-length'] = String(body.length);
          rawHeaders.push('content-type', 'application/json', 'content-length', headers['content-length']);
        }
        incoming.headers = headers;
        incoming.rawHeaders = rawHeaders;
        if (body) incoming.push(body);
        incoming.push(null);
        incoming.complete = true;
        const response = new InProcessResponse(incoming, socket, (answer) => resolve(answer));
        response.once('error', reject);
        app.routing(incoming, response);
      });
    },
  };
}

/** A socket that takes whatever is written and drops it: the answer is read off the response. */
class DiscardingSocket extends Writable {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 0;
  readonly encrypted = false;

  override _write(_chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    callback();
  }
}

/**
 * The response of an in-process request: it collects what is written to it, and hands over an
 * answer its service kept aside (`handedOver`, a field declared here so that setting it does not
 * reshape the object).
 */
class InProcessResponse extends ServerResponse {
  handedOver: string | Buffer | undefined = undefined;
  readonly #chunks: Buffer[] = [];
  readonly #done: (answer: ServiceResponse) => void;

  constructor(incoming: IncomingMessage, socket: DiscardingSocket, done: (answer: ServiceResponse) => void) {
    super(incoming);
    this.#done = done;
    // With a header set once, headers passed to writeHead are merged into the ones getHeaders()
    // reads (as light-my-request does); without, Node writes them straight into the head.
    this.setHeader('x-castie-in-process', '');
    this.removeHeader('x-castie-in-process');
    this.assignSocket(socket as unknown as Socket);
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    this.#collect(chunk, encoding);
    return super.write(chunk as string, encoding as BufferEncoding, callback as () => void);
  }

  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    else if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
    super.end(callback as () => void);
    const headers: ServiceResponse['headers'] = {};
    const set = this.getHeaders();
    for (const name in set) {
      const value = set[name];
      if (value === undefined) continue;
      headers[name] = Array.isArray(value) ? value.map(String) : String(value);
    }
    const handed = this.handedOver;
    this.handedOver = undefined;
    if (handed !== undefined) delete headers['content-length'];
    this.#done({ statusCode: this.statusCode, headers, body: handed ?? Buffer.concat(this.#chunks) });
    return this;
  }

  #collect(chunk: unknown, encoding: unknown): void {
    if (typeof chunk === 'string') this.#chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) this.#chunks.push(Buffer.from(chunk));
  }
}

/** Apps whose `onSend` hook hands answers over to in-process responses. */
const handingOver = new WeakSet<FastifyInstance>();

function handOverIn(app: FastifyInstance): void {
  if (handingOver.has(app)) return;
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!(reply.raw instanceof InProcessResponse)) return done(null, payload);
    // The gateway logs the request in the same log, under the same id: the service's own
    // line goes to debug (errors are logged as always).
    loggedByCaller(request);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    reply.raw.handedOver = payload;
    done(null, '');
  });
  handingOver.add(app);
}

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
