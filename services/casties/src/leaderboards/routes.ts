import { api, levelFor } from '@castie/contracts';
import { route } from '@castie/platform';
import { GROUP_SCORES, PEOPLE, type GroupScoreDoc, type PersonDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { CastiesContext } from '../context.ts';

const entry = (p: PersonDoc) => ({ handle: p.handle, lastName: p.lastName, firstName: p.firstName, profPic: p.profPic, city: p.city, state: p.state });

/** Overall (by XP, with level) and per-group (by group XP, with xp) leaderboards; deleted users vanish. */
export function leaderboardRoutes(app: FastifyInstance, ctx: CastiesContext): void {
  const people = ctx.documents.collection<PersonDoc>(PEOPLE);
  const scores = ctx.documents.collection<GroupScoreDoc>(GROUP_SCORES);

  route(
    app,
    api.casties.leaderboard,
    async ({ caller, params, query }) => {
      const followed = await ctx.groups.followedGroups(caller.userId);
      const leaderboard_groups = followed.map((g) => ({ slug: g.slug, groupName: g.groupName }));
      if (!params.group_slug) {
        const top = await people.find({ status: 'active' }, { sort: { xp: -1, handleLower: 1 }, limit: query.limit });
        return { leaderboard_groups, leaderboard_profiles: top.map((p) => ({ ...entry(p), level: levelFor(p.xp) })) };
      }
      const group = await ctx.groups.require(params.group_slug);
      const followers = await ctx.people.activeByIds(await ctx.groups.followerIds(group.slug));
      const xp = new Map((await scores.find({ slug: group.slug })).map((s) => [s.userId, s.xp]));
      const ranked = [...followers.values()].sort((a, b) => (xp.get(b._id) ?? 0) - (xp.get(a._id) ?? 0) || a.handleLower.localeCompare(b.handleLower)).slice(0, query.limit);
      return { leaderboard_groups, leaderboard_profiles: ranked.map((p) => ({ ...entry(p), xp: xp.get(p._id) ?? 0 })) };
    },
    { checkResponses: ctx.checkResponses },
  );
}
