import { internalHeaders } from '@castie/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorBody } from './errors.ts';

/**
 * Whether the request was routed to an operators' route (`/admin/…`). Decided by the route the
 * router chose, never by the raw URL: the router ignores duplicate slashes, so `//admin/accounts/`
 * reaches the same handler while its URL does not start with `/admin/`.
 */
export const isAdminRoute = (request: FastifyRequest): boolean => request.routeOptions.url?.startsWith('/admin/') === true;

/**
 * A service's `/admin/` routes answer only requests the gateway forwarded after checking the
 * operator's bearer token (it sets `x-castie-admin: true`); anyone else gets 401.
 */
export function adminRoutesOnlyFromGateway(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (!isAdminRoute(request) || request.headers[internalHeaders.admin] === 'true') return done();
    reply.code(401).send(errorBody('authorization_failed', 'the admin API needs Authorization: Bearer <ADMIN_TOKEN>'));
  });
}
