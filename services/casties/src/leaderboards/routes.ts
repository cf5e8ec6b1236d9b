import { api, levelFor } from '@castie/contracts';
import { route, type RouteOptions } from '@castie/platform';
import type { GroupDirectory, PersonDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { Leaderboards } from './boards.ts';

export interface LeaderboardRoutesDeps {
  boards: Pick<Leaderboards, 'overall' | 'group'>;
  groups: Pick<GroupDirectory, 'followedGroups' | 'require'>;
  routeOptions: RouteOptions;
}

const entry = (p: PersonDoc) => ({ handle: p.handle, lastName: p.lastName, firstName: p.firstName, profPic: p.profPic, city: p.city, state: p.state });

/** Overall (by XP, with level) and per-group (by group XP, with xp) leaderboards, read from the boards' sorted sets; deleted users vanish. */
export function leaderboardRoutes(app: FastifyInstance, ctx: LeaderboardRoutesDeps): void {
  route(
    app,
    api.casties.leaderboard,
    async ({ caller, params, query }) => {
      const followed = await ctx.groups.followedGroups(caller.userId);
      const leaderboard_groups = followed.map((g) => ({ slug: g.slug, groupName: g.groupName }));
      if (!params.group_slug) {
        if (query.offset === undefined) {
          const top = await ctx.boards.overall(query.limit);
          return { leaderboard_groups, leaderboard_profiles: top.map(({ person, xp }) => ({ ...entry(person), level: levelFor(xp) })) };
        }
        // One more than the page tells whether another follows.
        const found = await ctx.boards.overall(query.limit + 1, query.offset);
        const hasMore = found.length > query.limit;
        const top = found.slice(0, query.limit);
        return { leaderboard_groups, leaderboard_profiles: top.map(({ person, xp }) => ({ ...entry(person), level: levelFor(xp) })), has_more: hasMore, next_offset: hasMore ? query.offset + query.limit : null };
      }
      const group = await ctx.groups.require(params.group_slug);
      if (query.offset === undefined) {
        const board = await ctx.boards.group(group.slug, query.limit);
        return { leaderboard_groups, leaderboard_profiles: board.map(({ person, xp }) => ({ ...entry(person), xp })) };
      }
      const found = await ctx.boards.group(group.slug, query.limit + 1, query.offset);
      const hasMore = found.length > query.limit;
      const board = found.slice(0, query.limit);
      return { leaderboard_groups, leaderboard_profiles: board.map(({ person, xp }) => ({ ...entry(person), xp })), has_more: hasMore, next_offset: hasMore ? query.offset + query.limit : null };
    },
    ctx.routeOptions,
  );
}
