import { groupsAdminApi, mediaPath } from '@castie/contracts';
import { errorBody, route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';
import { membershipStreamId, standing } from '../following/membership-decider.ts';
import { groupStreamId } from './group-decider.ts';

/** The header the gateway sets after checking the admin bearer token (decisions.md: Admin API). */
export const ADMIN_HEADER = 'x-castie-admin';

/**
 * The operators' API: create groups, grant pending access, name group admins and creators.
 * Reached only through the gateway's /admin/ forwarder; operators have no session, so every
 * write waits for this service's read models before answering (the next read shows it).
 */
export function administrationRoutes(app: FastifyInstance, ctx: GroupsContext): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/admin/')) return;
    if (request.headers[ADMIN_HEADER] !== 'true') return reply.code(401).send(errorBody('authorization_failed', 'the admin API needs Authorization: Bearer <ADMIN_TOKEN>'));
  });

  /** The group as operators see it: the Group object for nobody in particular, and its configuration. */
  async function adminView(slug: string) {
    const group = await ctx.directory.require(slug);
    const named = await ctx.people.activeByIds([...group.admins, ...group.creators]);
    const handles = (ids: readonly string[]) => ids.flatMap((id) => named.get(id)?.handle ?? []);
    return { group: { ...(await ctx.directory.groupObject(null, group)), restrictCreation: group.restrictCreation, admins: handles(group.admins), creators: handles(group.creators) } };
  }

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
    groupsAdminApi.grantAccess,
    async ({ params }) => {
      const group = await ctx.loadGroup(params.group_slug);
      const person = await ctx.people.activeByHandle(params.handle);
      const done = await ctx.memberships.handle(membershipStreamId(group.slug, person._id), { type: 'GrantAccess', group, userId: person._id, handle: person.handle, by: 'admin' }, ctx.meta('admin'));
      await ctx.readModels.waitFor(done.positions);
      return { handle: person.handle, group_slug: group.slug, ...standing(done.state), message: `${person.handle} has been approved to join the ${group.groupName} group` };
    },
    ctx.opts,
  );

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

