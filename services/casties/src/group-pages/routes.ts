import { api, castieRules } from '@castie/contracts';
import { route, type Collection, type RouteOptions } from '@castie/platform';
import { groupAccuracy, type GroupDirectory } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { CastieObjects } from '../casties/castie-objects.ts';
import type { Leaderboards } from '../leaderboards/boards.ts';
import type { CastieView } from '../casties/read-model.ts';
import type { ForecastDoc } from '../forecasting/read-model.ts';

export interface GroupPageRoutesDeps {
  views: Collection<CastieView>;
  forecasts: Collection<ForecastDoc>;
  objects: CastieObjects;
  groups: Pick<GroupDirectory, 'require' | 'groupObject' | 'canSee' | 'scoreOf'>;
  boards: Pick<Leaderboards, 'ranking'>;
  routeOptions: RouteOptions;
}

/** The group page (Group object + ranking + its Casties) and the requester's accuracy in the group. */
export function groupPageRoutes(app: FastifyInstance, ctx: GroupPageRoutesDeps): void {
  const opts = ctx.routeOptions;

  route(
    app,
    api.casties.group,
    async ({ caller, params, query }) => {
      const group = await ctx.groups.require(params.group_slug);
      const [object, rank] = await Promise.all([ctx.groups.groupObject(caller.userId, group), ctx.boards.ranking(group.slug, caller.userId)]);
      if (!query.casties) return { ...object, ...rank };
      // The Casties list shows only to those who may see the group's Casties (empty otherwise).
      const visible = await ctx.groups.canSee(caller.userId, group);
      const views = visible ? await ctx.views.find({ groupSlug: group.slug, createdAt: { $ne: null } }, { sort: { activityAt: -1, _id: -1 }, limit: castieRules.pageDefault }) : [];
      return { ...object, ...rank, casties: await ctx.objects.list(caller.userId, views) };
    },
    opts,
  );

  route(
    app,
    api.casties.groupAccuracy,
    async ({ caller, params }) => {
      const group = await ctx.groups.require(params.group_slug);
      const [score, rank, forecasts] = await Promise.all([
        ctx.groups.scoreOf(caller.userId, group.slug),
        ctx.boards.ranking(group.slug, caller.userId),
        ctx.forecasts.find({ userId: caller.userId, groupSlug: group.slug }),
      ]);
      return {
        accuracy: {
          percentCorrect: groupAccuracy(score) ?? 0,
          ranking: rank.ranking,
          totalRanked: rank.totalRanked,
          ranking_outOf: rank.totalRanked,
          myForecasts: await ctx.objects.forecastObjects(forecasts),
        },
      };
    },
    opts,
  );
}
