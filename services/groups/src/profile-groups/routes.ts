import { groupsApi } from '@castie/contracts';
import { route, wantsPage } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';

/**
 * GET /api/profile/{handle}/groups/: profileInfo plus `myGroups`, the groups the person follows
 * as Group objects computed for the requester (or their slugs with slugs_only), or the string
 * "private" when the profile is private and not the requester's own.
 */
export function profileGroupsRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'directory' | 'opts' | 'people'>): void {
  route(
    app,
    groupsApi.profileGroups,
    async ({ caller, params, query }) => {
      const { person, info } = await ctx.people.profileInfo(caller.userId, params.handle);
      if (ctx.people.hidesFrom(person, caller.userId)) return { profileInfo: info, myGroups: 'private' as const };
      if (wantsPage(query)) {
        // Pages in follow order (oldest first) on the (userId, following, since, id) index.
        const page = await ctx.directory.followsPage(person._id, query);
        const more = { has_more: page.hasMore, next_before: page.nextBefore };
        if (query.slugs_only) return { profileInfo: info, myGroups: page.groups.map((g) => g.slug), ...more };
        return { profileInfo: info, myGroups: await ctx.directory.groupObjects(caller.userId, page.groups), ...more };
      }
      const groups = await ctx.directory.followedGroups(person._id);
      if (query.slugs_only) return { profileInfo: info, myGroups: groups.map((g) => g.slug) };
      return { profileInfo: info, myGroups: await ctx.directory.groupObjects(caller.userId, groups) };
    },
    ctx.opts,
  );
}
