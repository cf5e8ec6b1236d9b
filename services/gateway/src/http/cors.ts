import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Headers a browser client may send beyond the simple ones: credentials, JSON bodies, the API key, its request id. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Api-Key', 'X-Request-Id'];
/** Headers a browser client may read from an answer. */
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Cross-origin access for browser clients served from `origins` (CORS_ORIGINS), through
 * @fastify/cors. No origins: the plugin is not installed, so no answer allows any other origin.
 * A preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin is answered
 * 204 before routing and authentication; from any other origin it gets no CORS headers and the
 * route's own answer to OPTIONS, which a browser reads as a refusal. Credentials travel in
 * `Authorization`, not cookies, so no `Allow-Credentials`.
 */
export const corsForOrigins = fp(
  async (app: FastifyInstance, options: { origins: readonly string[] }) => {
    if (options.origins.length === 0) return;
    const allowed = new Set(options.origins);
    await app.register(cors, {
      delegator: (request, callback) => {
        const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
        callback(null, {
          origin: typeof request.headers.origin === 'string' && allowed.has(request.headers.origin),
          methods: METHODS,
          allowedHeaders: ALLOWED_HEADERS,
          exposedHeaders: EXPOSED_HEADERS,
          maxAge: 600,
          // Only a real preflight is answered by the plugin; any other OPTIONS gets the route's answer.
          preflight,
        });
      },
    });
  },
  { name: 'castie-cors' },
);
