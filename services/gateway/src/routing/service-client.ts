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
  body: Buffer;
}

/**
 * How the gateway reaches a service: the same HTTP contract either way. Embedded: in process
 * through Fastify's inject (no socket); cluster: over the network.
 */
export interface ServiceClient {
  request(req: ServiceRequest): Promise<ServiceResponse>;
}

export function inProcessClient(app: FastifyInstance): ServiceClient {
  return {
    async request(req) {
      const res = await app.inject({
        method: req.method as 'GET',
        url: req.url,
        headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json' },
        ...(req.body === undefined ? {} : { payload: JSON.stringify(req.body) }),
      });
      return { statusCode: res.statusCode, headers: res.headers as ServiceResponse['headers'], body: res.rawPayload };
    },
  };
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
