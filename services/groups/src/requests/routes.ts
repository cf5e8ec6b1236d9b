import { apiDate, apiTime, DomainError, groupsApi } from '@castie/contracts';
import { route, type Caller } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';
import { membershipStreamId, standing } from '../following/membership-decider.ts';

/**
 * Group admins handle the pending follows of their approval-required group (decisions.md):
 * GET /api/groups/{slug}/requests/ lists them, oldest first; .../{handle}/approve/ and /deny/
 * answer one. To anyone else these paths are 404, as if there were nothing there.
 */
export function requestRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'directory' | 'loadGroup' | 'memberships' | 'meta' | 'opts' | 'people' | 'timeZone'>): void {
  /** The group, if the caller administers it (from its stream: a freshly named admin works at once). */
  async function administered(slug: string, caller: Caller) {
    const group = await ctx.loadGroup(slug);
    if (!group.admins.includes(caller.userId)) throw new DomainError('object_not_found', 'there are no requests of this group that you can see: only its admins can', { group_slug: group.slug });
    return group;
  }

  route(
    app,
    groupsApi.requests,
    async ({ caller, params }) => {
      const group = await administered(params.group_slug, caller);
      const pending = await ctx.directory.pendingOf(group.slug);
      const people = await ctx.people.activeByIds(pending.map((p) => p.userId));
      const requests = pending.flatMap(({ userId, requestedAt }) => {
        const p = people.get(userId);
        if (!p) return [];
        return [{ handle: p.handle, firstName: p.firstName, lastName: p.lastName, profPic: p.profPic, requestedDate: apiDate(requestedAt, ctx.timeZone), requestedTime: apiTime(requestedAt, ctx.timeZone) }];
      });
      return { group_slug: group.slug, number_requests: requests.length, requests };
    },
    ctx.opts,
  );

  for (const [endpoint, type] of [
    [groupsApi.approveRequest, 'GrantAccess'],
    [groupsApi.denyRequest, 'DenyAccess'],
  ] as const) {
    route(
      app,
      endpoint,
      async ({ caller, params, wrote }) => {
        const group = await administered(params.group_slug, caller);
        const person = await ctx.people.activeByHandle(params.handle);
        const done = await ctx.memberships.handle(membershipStreamId(group.slug, person._id), { type, group, userId: person._id, handle: person.handle, by: caller.userId }, ctx.meta(caller));
        wrote(done.positions);
        const message = type === 'GrantAccess' ? `${person.handle} has been approved to join the ${group.groupName} group` : `the request of ${person.handle} to join the ${group.groupName} group has been denied`;
        return { handle: person.handle, group_slug: group.slug, ...standing(done.state), message };
      },
      ctx.opts,
    );
  }
}
