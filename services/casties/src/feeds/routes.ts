import { api, DomainError } from '@castie/contracts';
import { route, type Collection, type Filter, type RepeatedAnswers, type RouteOptions } from '@castie/platform';
import type { GroupDirectory } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { CastieObjects } from '../casties/castie-objects.ts';
import type { CastieView } from '../casties/read-model.ts';
import { queryTerms, type SearchDoc } from './read-model.ts';

export interface FeedRoutesDeps {
  views: Collection<CastieView>;
  search: Collection<SearchDoc>;
  objects: CastieObjects;
  groups: Pick<GroupDirectory, 'followedSlugs' | 'hiddenSlugsFor'>;
  /** The pages a user asks for again while nothing changed: kept as they were sent. */
  answers: RepeatedAnswers;
  routeOptions: RouteOptions;
}

/** A page cursor: `<instant>|<uuid>` of the last Castie shown (the contract checks its shape). */
function cursorOf(before: string | undefined): { at: string; id: string } | null {
  if (!before) return null;
  const bar = before.lastIndexOf('|');
  if (bar <= 0) throw new DomainError('missing_request_data', 'before must be the next_before of a previous page');
  return { at: before.slice(0, bar), id: before.slice(bar + 1) };
}

type Order = 'createdAt' | 'activityAt';

/** The views strictly after the cursor in (order desc, _id desc). */
function afterCursor(order: Order, c: { at: string; id: string }): Filter<CastieView> {
  return order === 'createdAt' ? { $or: [{ createdAt: { $lt: c.at } }, { createdAt: c.at, _id: { $lt: c.id } }] } : { $or: [{ activityAt: { $lt: c.at } }, { activityAt: c.at, _id: { $lt: c.id } }] };
}

/**
 * The home tabs (following, spicy, new) and Castie search. Every page is one "index range +
 * limit": following merges the index ranges of the followed groups (groupSlug, activityAt),
 * spicy and new walk (activityAt) or (createdAt) newest first skipping hidden groups, search
 * walks one term's Casties. A page asks for one more than its limit to know whether more exist.
 *
 * Every page reads this service's read models alone, so the same user asking for the same page
 * again before they change gets the answer it got (RepeatedAnswers), until a Castie on it ends.
 */
export function feedRoutes(app: FastifyInstance, ctx: FeedRoutesDeps): void {
  async function page(order: Order, groups: { in?: string[]; notIn?: string[] }, limit: number, before: string | undefined) {
    const cursor = cursorOf(before);
    const groupFilter: Filter<CastieView> = groups.in ? { groupSlug: { $in: groups.in } } : groups.notIn?.length ? { groupSlug: { $nin: groups.notIn } } : {};
    // Views whose creation has not arrived yet (its forecasts came first) have no createdAt.
    const filter: Filter<CastieView> = { ...groupFilter, createdAt: { $ne: null }, ...(cursor ? { $and: [afterCursor(order, cursor)] } : {}) };
    const sort = order === 'createdAt' ? ({ createdAt: -1, _id: -1 } as const) : ({ activityAt: -1, _id: -1 } as const);
    const found = await ctx.views.find(filter, { sort, limit: limit + 1 });
    const views = found.slice(0, limit);
    const last = views.at(-1);
    const hasMore = found.length > limit;
    return { views, hasMore, nextBefore: hasMore && last ? `${last[order]}|${last._id}` : null };
  }

  const repeatable = { ...ctx.routeOptions, repeatable: ctx.answers };

  route(
    app,
    api.casties.home,
    async ({ caller, params, query, validUntil }) => {
      const tab = params.tab;
      const hidden = new Set(await ctx.groups.hiddenSlugsFor(caller.userId));
      let allowed: string[] | null = null;
      if (tab === 'following') {
        const followed = await ctx.groups.followedSlugs(caller.userId);
        if (followed.length === 0) return { profile_handle: caller.handle, following: false as const, has_more: false, next_before: null };
        allowed = followed;
      }
      if (query.groups !== undefined) {
        // An empty value means no group selected: nothing matches.
        const picked = new Set(query.groups.map((g) => g.trim().toLowerCase()).filter((g) => g !== ''));
        allowed = (allowed ?? [...picked]).filter((s) => picked.has(s));
      }
      const visible = allowed?.filter((s) => !hidden.has(s));
      const result =
        visible?.length === 0
          ? { views: [], hasMore: false, nextBefore: null }
          : await page(tab === 'new' ? 'createdAt' : 'activityAt', visible ? { in: visible } : { notIn: [...hidden] }, query.limit, query.before);
      const more = { has_more: result.hasMore, next_before: result.nextBefore };
      if (query.ids) return { profile_handle: caller.handle, castie_ids: result.views.map((v) => v._id), ...more };
      return { profile_handle: caller.handle, casties: await ctx.objects.list(caller.userId, result.views, { validUntil }), ...more };
    },
    repeatable,
  );

  route(
    app,
    api.casties.searchCasties,
    async ({ caller, query, validUntil }) => {
      const terms = queryTerms(query.q);
      if (terms.length === 0) return { search_results: {}, has_more: false, next_before: null };
      const hidden = await ctx.groups.hiddenSlugsFor(caller.userId);
      // Every query word must begin a word of the question.
      const cursor = cursorOf(query.before);
      const filter: Filter<SearchDoc> = {
        $and: [
          ...terms.map((t): Filter<SearchDoc> => ({ terms: t })),
          ...(hidden.length > 0 ? [{ groupSlug: { $nin: hidden } }] : []),
          ...(cursor ? [{ $or: [{ createdAt: { $lt: cursor.at } }, { createdAt: cursor.at, _id: { $lt: cursor.id } }] }] : []),
        ],
      };
      const found = await ctx.search.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: query.limit + 1, projection: { createdAt: 1 } });
      const hits = found.slice(0, query.limit);
      const byId = await ctx.views.byIds(hits.map((h) => h._id));
      const views = hits.map((h) => byId.get(h._id)).filter((v) => v !== undefined);
      const last = hits.at(-1);
      const hasMore = found.length > query.limit;
      return { search_results: await ctx.objects.list(caller.userId, views, { forecastOptions: true, validUntil }), has_more: hasMore, next_before: hasMore && last ? `${last.createdAt}|${last._id}` : null };
    },
    repeatable,
  );
}
