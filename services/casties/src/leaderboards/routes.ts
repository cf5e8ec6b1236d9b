import { api, levelFor } from '@castie/contracts';
import { route, type RouteOptions } from '@castie/platform';
import type { GroupDirectory, People, PersonDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';

export interface LeaderboardRoutesDeps {
  people: Pick<People, 'topByXp'>;
  groups: Pick<GroupDirectory, 'followedGroups' | 'require' | 'leaderboard'>;
  routeOptions: RouteOptions;
}

const entry = (p: PersonDoc) => ({ handle: p.handle, lastName: p.lastName, firstName: p.firstName, profPic: p.profPic, city: p.city, state: p.state });

/** Overall (by XP, with level) and per-group (by group XP, with xp) leaderboards; deleted users vanish. */
export function leaderboardRoutes(app: FastifyInstance, ctx: LeaderboardRoutesDeps): void {
  route(
    app,
    api.casties.leaderboard,
    async ({ caller, params, query }) => {
      const followed = await ctx.groups.followedGroups(caller.userId);
      const leaderboard_groups = followed.map((g) => ({ slug: g.slug, groupName: g.groupName }));
      if (!params.group_slug) {
        const top = await ctx.people.topByXp(query.limit);
        return { leaderboard_groups, leaderboard_profiles: top.map((p) => ({ ...entry(p), level: levelFor(p.xp) })) };
      }
      const group = await ctx.groups.require(params.group_slug);
      const board = await ctx.groups.leaderboard(group.slug, query.limit);
      return { leaderboard_groups, leaderboard_profiles: board.map(({ person, xp }) => ({ ...entry(person), xp })) };
    },
    ctx.routeOptions,
  );
}
