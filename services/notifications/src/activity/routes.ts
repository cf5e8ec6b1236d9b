import { api, DomainError, notificationTypes, type NotificationType } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { NotificationsContext } from '../context.ts';

/**
 * The Activity section: the list of notifications, whole or by type. Opening it reads them all
 * (except castie-needs-answer, which stays unread until the Castie is answered).
 */
export function activityRoutes(app: FastifyInstance, ctx: NotificationsContext): void {
  route(
    app,
    api.notifications.list,
    async ({ caller, query, wrote }) => {
      const unknown = query.notification_type.filter((t) => !(notificationTypes as readonly string[]).includes(t));
      if (unknown.length > 0) throw new DomainError('missing_request_data', `notification_type must be one of ${notificationTypes.join(', ')}`);
      const now = ctx.clock.now();
      const list = await ctx.views.list(caller.userId, now);
      const retrieved = await ctx.inbox.handle(`inbox-${caller.userId}`, { type: 'RetrieveNotifications', userId: caller.userId, now }, { actor: caller.userId, now });
      wrote(retrieved.positions);
      if (query.notification_type.length === 0) return { notifications: list };
      const types = [...new Set(query.notification_type)] as NotificationType[];
      return Object.fromEntries(types.map((t) => [t, list.filter((n) => n.notification_type === t)]));
    },
    { checkResponses: ctx.checkResponses },
  );
}
