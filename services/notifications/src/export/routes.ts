import { DomainError, internalHeaders } from '@castie/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { NotificationsContext } from '../context.ts';

/** The largest page one internal export request answers. */
export const EXPORT_PAGE_MAX = 1000;

const PageQuery = z.object({
  after: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(EXPORT_PAGE_MAX).default(500),
});

/**
 * The notifications section of the own-data export (`GET /api/export/`, assembled by the gateway;
 * not in the public routing table): every notification of the caller, a page at a time
 * (`?after=<cursor>&limit=<n>` answering `{ items, next }`, `next` null on the last page), as the
 * Activity section words them but read without its side effect: an export marks nothing as read.
 * The first page leads with the notifications worked out on reading; then the stored ones, newest
 * first, from the (userId, createdAt, _id) index (see NotificationViews.exportPage).
 */
export function exportRoutes(app: FastifyInstance, ctx: Pick<NotificationsContext, 'clock' | 'views'>): void {
  app.get('/internal/export/notifications/', async (request) => {
    const userId = request.headers[internalHeaders.userId];
    if (typeof userId !== 'string' || userId === '') throw new DomainError('authentication_failed', 'credentials are required');
    const parsed = PageQuery.safeParse(request.query ?? {});
    if (!parsed.success) throw new DomainError('missing_request_data', 'after/limit are malformed');
    const { after, limit } = parsed.data;
    const page = await ctx.views.exportPage(userId, ctx.clock.now(), after ?? null, limit);
    return { status: 200, ...page };
  });
}
