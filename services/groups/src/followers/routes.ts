import { groupsApi, type Frodad } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';

/** Who follows a group, and which of them are the requester's frodads. Deleted accounts vanish. */
export function followerRoutes(app: FastifyInstance, ctx: GroupsContext): void {
  /** Frodad objects (without level, as the spec's group listings show them) indexed by handle, oldest follow first. */
  async function followers(requesterId: string, slug: string, only?: ReadonlySet<string>): Promise<Record<string, Frodad>> {
    const group = await ctx.directory.require(slug);
    const ids = (await ctx.directory.followerIds(group.slug)).filter((id) => !only || only.has(id));
    const [people, relations] = await Promise.all([ctx.people.activeByIds(ids), ctx.people.relations(requesterId, ids)]);
    const out: Record<string, Frodad> = {};
    for (const id of ids) {
      const person = people.get(id);
      if (person) out[person.handle] = ctx.people.frodad(person, relations.get(id) ?? 'not-friends', { withLevel: false });
    }
    return out;
  }

  route(app, groupsApi.followers, async ({ caller, params }) => ({ followers: await followers(caller.userId, params.group_slug) }), ctx.opts);

  route(
    app,
    groupsApi.friendFollowers,
    async ({ caller, params }) => ({ friendFollowers: await followers(caller.userId, params.group_slug, new Set(await ctx.people.friendIds(caller.userId))) }),
    ctx.opts,
  );
}
