import { api, type Frodad } from '@castie/contracts';
import { route, wantsPage } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { SocialContext } from '../context.ts';

/**
 * GET /api/profile/{handle}/frodads/: the shared profileInfo plus the person's frodads, keyed by
 * handle, ordered by last name. Social owns friendships, so it answers this profile section
 * (docs/profiles.md). A private profile shows only profileInfo to everyone else, friends included.
 */
export function profileFrodadsRoutes(app: FastifyInstance, ctx: Pick<SocialContext, 'people' | 'routeOptions'>): void {
  route(
    app,
    api.social.profileFrodads,
    async ({ caller, params, query }) => {
      const person = await ctx.people.activeByHandle(params.handle);
      const profileInfo = await ctx.people.profileInfoOf(caller.userId, person);
      if (ctx.people.hidesFrom(person, caller.userId)) return { profileInfo, myFrodads: 'private' as const };

      // Last name, then handle: paged on the people's index, whole sorted here.
      const page = wantsPage(query) ? await ctx.people.friendsPage(person._id, query) : null;
      const friends = page ? page.items : [...(await ctx.people.activeByIds(await ctx.people.friendIds(person._id))).values()];
      if (!page) friends.sort((a, b) => a.lastNameLower.localeCompare(b.lastNameLower) || a.handleLower.localeCompare(b.handleLower));
      const relations = await ctx.people.relations(caller.userId, friends.map((f) => f._id));
      // fromEntries defines own properties: a handle such as `__proto__` stays an ordinary key.
      const myFrodads: Record<string, Frodad> = Object.fromEntries(friends.map((f) => [f.handle, ctx.people.frodad(f, relations.get(f._id) ?? 'not-friends')]));
      return { profileInfo, myFrodads, ...(page ? { has_more: page.hasMore, next_before: page.nextBefore } : {}) };
    },
    ctx.routeOptions,
  );
}
