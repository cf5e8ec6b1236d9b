import { api } from '@castie/contracts';
import { route, wantsPage, type Caller } from '@castie/platform';
import type { PersonDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { SocialContext } from '../context.ts';
import { frodadMessages, frodadsStreamId } from './decider.ts';

/** Sending, answering and listing frodad requests, and ending friendships. */
export function frodadRoutes(app: FastifyInstance, ctx: Pick<SocialContext, 'clock' | 'frodads' | 'people' | 'routeOptions'>): void {
  const meta = (caller: Caller) => ({ actor: caller.userId, now: ctx.clock.now() });

  route(
    app,
    api.social.addFrodad,
    async ({ caller, params, wrote }) => {
      const target = await ctx.people.activeByHandle(params.handle);
      const done = await ctx.frodads.handle(frodadsStreamId(caller.userId, target._id), { type: 'RequestFrodad', fromId: caller.userId, toId: target._id }, meta(caller));
      wrote(done.positions);
      // A request crossing one from the target accepts it (see README).
      const accepted = done.events.some((e) => e.type === 'FrodadRequestAccepted');
      return { message: accepted ? frodadMessages.accepted(target.handle) : frodadMessages.requested };
    },
    ctx.routeOptions,
  );

  route(
    app,
    api.social.frodadRequests,
    async ({ caller, query }) => {
      // Paged: received and sent together, newest first; each page's numbers count that page.
      const paged = wantsPage(query) ? await ctx.people.requestsPage(caller.userId, query) : null;
      const { received, sent } = paged ?? (await ctx.people.requests(caller.userId));
      // Deleted people vanish from the lists (decisions.md).
      const active = await ctx.people.activeByIds([...received, ...sent]);
      const entries = (ids: string[]) => ids.flatMap((id) => (active.has(id) ? [entry(active.get(id)!)] : []));
      const [requestsReceived, requestsSent] = [entries(received), entries(sent)];
      return {
        number_received: requestsReceived.length,
        requests_received: requestsReceived.length > 0 ? requestsReceived : null,
        number_sent: requestsSent.length,
        requests_sent: requestsSent.length > 0 ? requestsSent : null,
        ...(paged ? { has_more: paged.hasMore, next_before: paged.nextBefore } : {}),
      };
    },
    ctx.routeOptions,
  );

  route(
    app,
    api.social.respondToFrodadRequest,
    async ({ caller, params, wrote }) => {
      const requester = await ctx.people.activeByHandle(params.handle);
      const accept = params.action === 'accept';
      const done = await ctx.frodads.handle(
        frodadsStreamId(caller.userId, requester._id),
        { type: 'RespondToRequest', byId: caller.userId, fromId: requester._id, fromHandle: requester.handle, accept },
        meta(caller),
      );
      wrote(done.positions);
      return { message: accept ? frodadMessages.accepted(requester.handle) : frodadMessages.rejected(requester.handle) };
    },
    ctx.routeOptions,
  );

  route(
    app,
    api.social.unfrodad,
    async ({ caller, params, wrote }) => {
      const other = await ctx.people.activeByHandle(params.handle);
      const done = await ctx.frodads.handle(frodadsStreamId(caller.userId, other._id), { type: 'RemoveFrodad', byId: caller.userId, otherId: other._id, otherHandle: other.handle }, meta(caller));
      wrote(done.positions);
      return { message: frodadMessages.removed(other.handle) };
    },
    ctx.routeOptions,
  );
}

const entry = (p: PersonDoc) => ({ handle: p.handle, firstName: p.firstName, lastName: p.lastName });
