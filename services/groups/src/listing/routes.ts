import { groupsApi } from '@castie/contracts';
import { route, wantsPage } from '@castie/platform';
import type { GroupDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';

/** [groupName, slug] pairs; the directory already sorts groups alphabetically by name. */
const pairs = (groups: readonly GroupDoc[]): [string, string][] => groups.map((g) => [g.groupName, g.slug]);

/** Lists of groups: all of them and search results (as Group objects), the menu of followed ones, where one may create. */
export function listingRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'directory' | 'opts'>): void {
  route(
    app,
    groupsApi.listGroups,
    async ({ caller, query }) => {
      if (!wantsPage(query)) return { groups: await ctx.directory.groupObjects(caller.userId, await ctx.directory.all()) };
      // Alphabetical pages in (lowercased name, slug) on the groups' name index.
      const page = await ctx.directory.groupsPage(query);
      return { groups: await ctx.directory.groupObjects(caller.userId, page.items), has_more: page.hasMore, next_before: page.nextBefore };
    },
    ctx.opts,
  );

  route(app, groupsApi.hamburger, async ({ caller }) => ({ handle: caller.handle, groups: pairs(await ctx.directory.followedGroups(caller.userId)) }), ctx.opts);

  route(
    app,
    groupsApi.searchGroups,
    async ({ caller, query }) => {
      const q = query.q.trim().toLowerCase();
      const matches = (await ctx.directory.all())
        .filter((g) => !q || g.groupNameLower.includes(q) || g.slug.includes(q) || g.groupInfoText.toLowerCase().includes(q))
        .sort((a, b) => (a.slug < b.slug ? -1 : 1))
        .filter((g) => query.before === undefined || g.slug > query.before);
      const page = matches.slice(0, query.limit);
      const hasMore = matches.length > page.length;
      return { search_results: await ctx.directory.groupObjects(caller.userId, page), has_more: hasMore, next_before: hasMore ? page[page.length - 1]!.slug : null };
    },
    ctx.opts,
  );

  route(app, groupsApi.createCastieGroups, async ({ caller }) => ({ groups: pairs(await ctx.directory.creatableGroups(caller.userId)) }), ctx.opts);
}
