import { apiDate, apiTime, groupsAdminApi, GROUPS_TOPIC, IDENTITY_TOPIC, mediaPath } from '@castie/contracts';
import { adminRoutesOnlyFromGateway, route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';
import { membershipStreamId, standing } from '../following/membership-decider.ts';
import { groupStreamId, settingNames, type GroupSettings } from './group-decider.ts';
import { grantPending } from './open-group-policy.ts';

/** The header the gateway sets after checking the admin bearer token (decisions.md: Admin API). */
export const ADMIN_HEADER = 'x-castie-admin';

/**
 * The operators' API: create, configure, list and show groups, list pending access requests (of a group or
 * of all), grant or deny them, name group admins and creators.
 * Reached only through the gateway's /admin/ forwarder; operators have no session, so every
 * write waits for this service's read models before answering (the next read shows it).
 */
export function administrationRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'directory' | 'groups' | 'loadGroup' | 'media' | 'memberships' | 'meta' | 'opts' | 'people' | 'readModels' | 'timeZone'>): void {
  adminRoutesOnlyFromGateway(app);

  /** The group as operators see it: the Group object for nobody in particular, and its configuration. */
  async function adminGroup(slugOrDoc: string | Awaited<ReturnType<typeof ctx.directory.require>>) {
    const group = typeof slugOrDoc === 'string' ? await ctx.directory.require(slugOrDoc) : slugOrDoc;
    const named = await ctx.people.activeByIds([...group.admins, ...group.creators]);
    const handles = (ids: readonly string[]) => ids.flatMap((id) => named.get(id)?.handle ?? []);
    return { ...(await ctx.directory.groupObject(null, group)), restrictCreation: group.restrictCreation, admins: handles(group.admins), creators: handles(group.creators) };
  }
  const adminView = async (slug: string) => ({ group: await adminGroup(slug) });

  route(
    app,
    groupsAdminApi.listGroups,
    async () => {
      // Operators have no session: a list shows everything the log held when they asked.
      await ctx.readModels.catchUp([GROUPS_TOPIC, IDENTITY_TOPIC]);
      const all = (await ctx.directory.all()).sort((a, b) => a.slug.localeCompare(b.slug));
      const groups = [];
      for (const group of all) groups.push(await adminGroup(group));
      return { groups };
    },
    ctx.opts,
  );

  route(
    app,
    groupsAdminApi.showGroup,
    async ({ params }) => {
      const group = await ctx.loadGroup(params.group_slug);
      // The stream knows it; the read model may be a moment behind.
      await ctx.readModels.catchUp([GROUPS_TOPIC]);
      return adminView(group.slug);
    },
    ctx.opts,
  );

  route(
    app,
    groupsAdminApi.accessRequests,
    async ({ query }) => {
      await ctx.readModels.catchUp([GROUPS_TOPIC, IDENTITY_TOPIC]);
      const groups = query.group ? [await ctx.directory.require((await ctx.loadGroup(query.group)).slug)] : (await ctx.directory.all()).filter((g) => g.requiresApproval);
      const requests = [];
      for (const group of groups) {
        const pending = await ctx.directory.pendingOf(group.slug);
        const people = await ctx.people.activeByIds(pending.map((p) => p.userId));
        for (const { userId, requestedAt } of pending) {
          const p = people.get(userId);
          if (!p) continue;
          requests.push({
            group_slug: group.slug,
            groupName: group.groupName,
            handle: p.handle,
            firstName: p.firstName,
            lastName: p.lastName,
            profPic: p.profPic,
            requestedDate: apiDate(requestedAt, ctx.timeZone),
            requestedTime: apiTime(requestedAt, ctx.timeZone),
            requestedAt,
          });
        }
      }
      requests.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt) || a.group_slug.localeCompare(b.group_slug));
      return { number_requests: requests.length, requests: requests.map(({ requestedAt: _at, ...r }) => r) };
    },
    ctx.opts,
  );

  route(
    app,
    groupsAdminApi.createGroup,
    async ({ body }) => {
      const { groupIcon, restrictCreation, ...fields } = body;
      const done = await ctx.groups.handle(
        groupStreamId(body.slug),
        { type: 'CreateGroup', ...fields, groupIcon: groupIcon ? mediaPath(groupIcon.key) : '', restrictCreation: restrictCreation ?? false },
        ctx.meta('admin'),
      );
      // Operators have no session: the answer waits (bounded) until the read models show the write.
      await ctx.readModels.waitFor(done.positions);
      return adminView(body.slug);
    },
    ctx.opts,
  );

  route(
    app,
    groupsAdminApi.configureGroup,
    async ({ params, body }) => {
      const before = await ctx.loadGroup(params.group_slug);
      // Who waits now, should this open the group: the open-group policy may let them in before this call lists them again.
      let waitedBefore: string[] = [];
      if (before.requiresApproval && body.requiresApproval === false) {
        await ctx.readModels.catchUp([GROUPS_TOPIC]);
        waitedBefore = (await ctx.directory.pendingOf(before.slug)).map((p) => p.userId);
      }
      const { groupIcon, ...fields } = body;
      const settings: Partial<GroupSettings> = { ...fields, ...(groupIcon ? { groupIcon: mediaPath(groupIcon.key) } : {}) };
      // The new icon is already stored (the gateway stored it before forwarding, and deletes it if this fails).
      const done = await ctx.groups.handle(groupStreamId(before.slug), { type: 'ConfigureGroup', ...settings }, ctx.meta('admin'));
      await ctx.readModels.waitFor(done.positions);
      const changed = done.events.flatMap((e) => (e.type === 'GroupConfigured' ? settingNames.filter((name) => e.data[name] !== undefined) : []));
      // Those the read models did not hold in time are let in by the open-group policy.
      const granted = changed.includes('requiresApproval') && done.state.status === 'created' && !done.state.requiresApproval ? (await grantPending(ctx, before.slug, waitedBefore)).granted : [];
      if (changed.includes('groupIcon')) await forgetIcon(before.groupIcon);
      return { ...(await adminView(before.slug)), updated_fields: changed, granted };
    },
    ctx.opts,
  );

  /** Deletes a replaced icon's file once no group shows it any more (a failure leaves a stray file, nothing worse). */
  async function forgetIcon(icon: string): Promise<void> {
    const prefix = mediaPath('');
    if (!ctx.media || !icon.startsWith(prefix)) return;
    if ((await ctx.directory.all()).some((g) => g.groupIcon === icon)) return;
    await ctx.media.delete(icon.slice(prefix.length)).catch((error: unknown) => app.log.warn({ err: error, icon }, 'could not delete a replaced group icon'));
  }

  for (const [endpoint, type] of [
    [groupsAdminApi.grantAccess, 'GrantAccess'],
    [groupsAdminApi.denyAccess, 'DenyAccess'],
  ] as const) {
    route(
      app,
      endpoint,
      async ({ params }) => {
        const group = await ctx.loadGroup(params.group_slug);
        const person = await ctx.people.activeByHandle(params.handle);
        const done = await ctx.memberships.handle(membershipStreamId(group.slug, person._id), { type, group, userId: person._id, handle: person.handle, by: 'admin' }, ctx.meta('admin'));
        await ctx.readModels.waitFor(done.positions);
        const message = type === 'GrantAccess' ? `${person.handle} has been approved to join the ${group.groupName} group` : `the request of ${person.handle} to join the ${group.groupName} group has been denied`;
        return { handle: person.handle, group_slug: group.slug, ...standing(done.state), message };
      },
      ctx.opts,
    );
  }

  for (const [endpoint, type] of [
    [groupsAdminApi.nameAdmin, 'NameAdmin'],
    [groupsAdminApi.nameCreator, 'NameCreator'],
  ] as const) {
    route(
      app,
      endpoint,
      async ({ params }) => {
        const group = await ctx.loadGroup(params.group_slug);
        const person = await ctx.people.activeByHandle(params.handle);
        const done = await ctx.groups.handle(groupStreamId(group.slug), { type, userId: person._id }, ctx.meta('admin'));
        await ctx.readModels.waitFor(done.positions);
        return adminView(group.slug);
      },
      ctx.opts,
    );
  }
}

