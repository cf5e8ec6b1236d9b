import { api, DomainError, notificationTypes, type NotificationType } from '@castie/contracts';
import { route, wantsPage } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { NotificationsContext } from '../context.ts';

/**
 * The Activity section: the list of notifications, whole or by type. Opening it reads them all
 * (except castie-needs-answer, which stays unread until the Castie is answered).
 */
export function activityRoutes(app: FastifyInstance, ctx: Pick<NotificationsContext, 'checkResponses' | 'clock' | 'inbox' | 'views'>): void {
  route(
    app,
    api.notifications.list,
    async ({ caller, query, wrote }) => {
      const unknown = query.notification_type.filter((t) => !(notificationTypes as readonly string[]).includes(t));
      if (unknown.length > 0) throw new DomainError('missing_request_data', `notification_type must be one of ${notificationTypes.join(', ')}`);
      const now = ctx.clock.now();
      const types = query.notification_type.length === 0 ? null : ([...new Set(query.notification_type)] as NotificationType[]);
      // Paged: every notification (beyond the newest 100 too), one page of the (createdAt, id) order.
      const paged = wantsPage(query) ? await ctx.views.page(caller.userId, now, query, types) : null;
      const list = paged ? paged.list : await ctx.views.list(caller.userId, now);
      const retrieved = await ctx.inbox.record(`inbox-${caller.userId}`, { type: 'RetrieveNotifications', userId: caller.userId, now }, { actor: caller.userId, now });
      wrote(retrieved.positions);
      // Typed as the catch-all's values: TypeScript cannot express named keys beside an index signature of another type; the schema checks them by name.
      const more = (paged ? { has_more: paged.hasMore, next_before: paged.nextBefore } : {}) as Record<string, never>;
      if (!types) return { notifications: list, ...more };
      return { ...Object.fromEntries(types.map((t) => [t, list.filter((n) => n.notification_type === t)])), ...more };
    },
    { checkResponses: ctx.checkResponses },
  );
}
