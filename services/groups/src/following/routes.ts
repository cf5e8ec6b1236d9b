import { groupsApi } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';
import { groupMessages, membershipStreamId, standing } from './membership-decider.ts';

/** Following and unfollowing a group (spec: Group access). */
export function followingRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'loadGroup' | 'memberships' | 'meta' | 'opts'>): void {
  route(
    app,
    groupsApi.follow,
    async ({ caller, params, wrote }) => {
      // The group stream first (it must exist; is approval needed?), then the user's membership.
      const group = await ctx.loadGroup(params.group_slug);
      const done = await ctx.memberships.handle(membershipStreamId(group.slug, caller.userId), { type: 'Follow', group, userId: caller.userId, handle: caller.handle }, ctx.meta(caller));
      wrote(done.positions);
      const now = standing(done.state);
      return { handle: caller.handle, group_slug: group.slug, ...now, ...(now.access === 'pending' ? { access_pending: groupMessages.accessPending } : {}) };
    },
    ctx.opts,
  );

  route(
    app,
    groupsApi.unfollow,
    async ({ caller, params, wrote }) => {
      const group = await ctx.loadGroup(params.group_slug);
      const done = await ctx.memberships.handle(membershipStreamId(group.slug, caller.userId), { type: 'Unfollow', group, userId: caller.userId, handle: caller.handle }, ctx.meta(caller));
      wrote(done.positions);
      return { handle: caller.handle, group_slug: group.slug, ...standing(done.state) };
    },
    ctx.opts,
  );
}
