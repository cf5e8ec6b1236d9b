import { api } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { SocialContext } from '../context.ts';

/**
 * GET /api/search/people/?q=: active people whose handle, first or last name contain every word
 * of q, by last name, in bounded pages. Private profiles are found too (privacy hides sections,
 * not people); deleted ones never.
 */
export function peopleSearchRoutes(app: FastifyInstance, ctx: Pick<SocialContext, 'people' | 'routeOptions'>): void {
  route(
    app,
    api.social.searchPeople,
    async ({ caller, query }) => {
      const { found, hasMore, nextBefore } = await ctx.people.search(query.q, { limit: query.limit, before: query.before });
      const relations = await ctx.people.relations(caller.userId, found.map((p) => p._id));
      const search_results = found.map((p) => {
        const { friend_status } = ctx.people.frodad(p, relations.get(p._id) ?? 'not-friends', { withLevel: false });
        return { first_name: p.firstName, last_name: p.lastName, friend_status, handle: p.handle };
      });
      return { search_results, has_more: hasMore, next_before: nextBefore };
    },
    ctx.routeOptions,
  );
}
