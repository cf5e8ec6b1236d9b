import { groupsApi, type Frodad } from '@castie/contracts';
import { route, wantsPage, type PageRequest } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { GroupsContext } from '../context.ts';

/** Who follows a group, and which of them are the requester's frodads. Deleted accounts vanish. */
export function followerRoutes(app: FastifyInstance, ctx: Pick<GroupsContext, 'directory' | 'opts' | 'people'>): void {
  /** Frodad objects (without level, as the spec's group listings show them) indexed by handle, in the order of `ids`. */
  async function frodads(requesterId: string, ids: readonly string[]): Promise<Record<string, Frodad>> {
    const [people, relations] = await Promise.all([ctx.people.activeByIds(ids), ctx.people.relations(requesterId, ids)]);
    const out: Record<string, Frodad> = {};
    for (const id of ids) {
      const person = people.get(id);
      if (person) out[person.handle] = ctx.people.frodad(person, relations.get(id) ?? 'not-friends', { withLevel: false });
    }
    return out;
  }

  /**
   * A group's followers (or those among `only`), oldest follow first: whole without paging
   * parameters, else one page of the (slug, following, since, id) index.
   */
  async function followers(requesterId: string, slug: string, req: PageRequest, only?: readonly string[]): Promise<{ list: Record<string, Frodad>; more: { has_more?: boolean; next_before?: string | null } }> {
    const group = await ctx.directory.require(slug);
    if (wantsPage(req)) {
      const page = await ctx.directory.followersPage(group.slug, req, only);
      return { list: await frodads(requesterId, page.items.map((m) => m.userId)), more: { has_more: page.hasMore, next_before: page.nextBefore } };
    }
    const allowed = only ? new Set(only) : null;
    const ids = (await ctx.directory.followerIds(group.slug)).filter((id) => !allowed || allowed.has(id));
    return { list: await frodads(requesterId, ids), more: {} };
  }

  route(
    app,
    groupsApi.followers,
    async ({ caller, params, query }) => {
      const { list, more } = await followers(caller.userId, params.group_slug, query);
      return { followers: list, ...more };
    },
    ctx.opts,
  );

  route(
    app,
    groupsApi.friendFollowers,
    async ({ caller, params, query }) => {
      const { list, more } = await followers(caller.userId, params.group_slug, query, await ctx.people.friendIds(caller.userId));
      return { friendFollowers: list, ...more };
    },
    ctx.opts,
  );
}
