import { DomainError, internalHeaders } from '@castie/contracts';
import type { FastifyInstance } from 'fastify';
import type { NotificationsContext } from '../context.ts';

/**
 * The notifications section of the own-data export (`GET /api/export/`, assembled by the gateway;
 * not in the public routing table). The list the Activity section shows, newest first and at most
 * as many as it shows, but read without its side effect: an export marks nothing as read.
 */
export function exportRoutes(app: FastifyInstance, ctx: NotificationsContext): void {
  app.get('/internal/export/notifications/', async (request) => {
    const userId = request.headers[internalHeaders.userId];
    if (typeof userId !== 'string' || userId === '') throw new DomainError('authentication_failed', 'credentials are required');
    return { status: 200, items: await ctx.views.list(userId, ctx.clock.now()), next: null };
  });
}
