import { api, instantOf } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { NotificationsContext } from '../context.ts';

/** The notification indicator: polled counts, and the counts a sign-in starts with. */
export function countsRoutes(app: FastifyInstance, ctx: Pick<NotificationsContext, 'checkResponses' | 'clock' | 'inbox' | 'timeZone' | 'views'>): void {
  route(
    app,
    api.notifications.initialize,
    async ({ caller }) => ctx.views.counts(caller.userId, ctx.clock.now(), await ctx.views.lastRetrievedAt(caller.userId)),
    { checkResponses: ctx.checkResponses },
  );

  route(
    app,
    api.notifications.login,
    async ({ caller, body, wrote }) => {
      const now = ctx.clock.now();
      // Unseen relative to the notification the client says it saw last (service time zone).
      const [h = '0', m = '0', s = '0'] = body.last_seen_time.split(':');
      const lastSeen = instantOf(body.last_seen_date, `${h.padStart(2, '0')}:${m}`, ctx.timeZone);
      const since = lastSeen ? new Date(lastSeen.getTime() + Math.floor(Number(s)) * 1000).toISOString() : null;
      const counts = await ctx.views.counts(caller.userId, now, since);
      const signedIn = await ctx.inbox.record(
        `inbox-${caller.userId}`,
        { type: 'SignIn', userId: caller.userId, lastSeenDate: body.last_seen_date, lastSeenTime: body.last_seen_time, now },
        { actor: caller.userId, now },
      );
      wrote(signedIn.positions);
      return { profile_handle: caller.handle, ...counts };
    },
    { checkResponses: ctx.checkResponses },
  );
}
