import { groupsApi } from '@castie/contracts';
import { route } from '@castie/platform';
import type { GroupDoc } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';

/** [groupName, slug] pairs; the directory already sorts groups alphabetically by name. */
const pairs = (groups: readonly GroupDoc[]): [string, string][] => groups.map((g) => [g.groupName, g.slug]);

/** Lists of groups: all of them (as Group objects), the menu of followed ones, where one may create. */
export function listingRoutes(app: FastifyInstance, ctx: GroupsContext): void {
  route(app, groupsApi.listGroups, async ({ caller }) => ({ groups: await ctx.directory.groupObjects(caller.userId, await ctx.directory.all()) }), ctx.opts);

  route(app, groupsApi.hamburger, async ({ caller }) => ({ handle: caller.handle, groups: pairs(await ctx.directory.followedGroups(caller.userId)) }), ctx.opts);

  route(app, groupsApi.createCastieGroups, async ({ caller }) => ({ groups: pairs(await ctx.directory.creatableGroups(caller.userId)) }), ctx.opts);
}
