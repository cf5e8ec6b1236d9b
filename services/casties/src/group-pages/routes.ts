import { api, castieRules } from '@castie/contracts';
import { route, type Collection } from '@castie/platform';
import { GROUP_SCORES, groupAccuracy, type GroupScoreDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { CastiesContext } from '../context.ts';

/**
 * A requester's position by group XP among the group's active followers with at least one
 * forecast on an answered Castie of the group (decisions.md); 0 when unranked.
 */
export async function groupRanking(ctx: CastiesContext, slug: string, userId: string): Promise<{ ranking: number; totalRanked: number }> {
  const scores = ctx.documents.collection<GroupScoreDoc>(GROUP_SCORES) as Collection<GroupScoreDoc>;
  const [scored, followers] = await Promise.all([scores.find({ slug, answered: { $gt: 0 } }), ctx.groups.followerIds(slug)]);
  const following = new Set(followers);
  const active = await ctx.people.activeByIds(scored.map((s) => s.userId).filter((id) => following.has(id)));
  const ranked = scored.filter((s) => active.has(s.userId)).sort((a, b) => b.xp - a.xp || a.userId.localeCompare(b.userId));
  const index = ranked.findIndex((s) => s.userId === userId);
  return { ranking: index + 1, totalRanked: ranked.length };
}

/** The group page (Group object + ranking + its Casties) and the requester's accuracy in the group. */
export function groupPageRoutes(app: FastifyInstance, ctx: CastiesContext): void {
  const opts = { checkResponses: ctx.checkResponses };

  route(
    app,
    api.casties.group,
    async ({ caller, params, query }) => {
      const group = await ctx.groups.require(params.group_slug);
      const [object, rank] = await Promise.all([ctx.groups.groupObject(caller.userId, group), groupRanking(ctx, group.slug, caller.userId)]);
      if (!query.casties) return { ...object, ...rank };
      // The Casties list shows only to those who may see the group's Casties (empty otherwise).
      const visible = await ctx.groups.canSee(caller.userId, group);
      const views = visible ? await ctx.views.find({ groupSlug: group.slug }, { sort: { activityAt: -1, _id: -1 }, limit: castieRules.pageDefault }) : [];
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
        groupRanking(ctx, group.slug, caller.userId),
        ctx.forecastDocs.find({ userId: caller.userId, groupSlug: group.slug }),
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
