import { api } from '@castie/contracts';
import { route, type Filter } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { CastiesContext } from '../context.ts';
import { DAYS, queryTerms, SEARCH, type DayDoc, type SearchDoc } from '../read-model/projection.ts';
import { feedPage } from './pages.ts';

/** The home tabs (following, spicy, new) and Castie search: bounded pages, indexed queries. */
export function feedRoutes(app: FastifyInstance, ctx: CastiesContext): void {
  const opts = { checkResponses: ctx.checkResponses };
  const days = ctx.documents.collection<DayDoc>(DAYS);
  const search = ctx.documents.collection<SearchDoc>(SEARCH);

  route(
    app,
    api.casties.home,
    async ({ caller, params, query }) => {
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
      const filter: Filter = allowed ? { groupSlug: { $in: allowed.filter((s) => !hidden.has(s)) } } : hidden.size > 0 ? { groupSlug: { $nin: [...hidden] } } : {};
      const empty = allowed !== null && (filter.groupSlug as { $in: string[] }).$in.length === 0;
      const page = empty ? { views: [], hasMore: false, nextBefore: null } : await feedPage(ctx.views, days, tab === 'new' ? 'created' : 'activity', filter, query.limit, query.before);
      const more = { has_more: page.hasMore, next_before: page.nextBefore };
      if (query.ids) return { profile_handle: caller.handle, castie_ids: page.views.map((v) => v._id), ...more };
      return { profile_handle: caller.handle, casties: await ctx.objects.list(caller.userId, page.views), ...more };
    },
    opts,
  );

  route(
    app,
    api.casties.searchCasties,
    async ({ caller, query }) => {
      const terms = queryTerms(query.q);
      if (terms.length === 0) return { search_results: {}, has_more: false, next_before: null };
      const hidden = await ctx.groups.hiddenSlugsFor(caller.userId);
      // Every query word must begin a word of the question; each term is a hash-index lookup.
      const filter: Filter = { $and: [...terms.map((t) => ({ terms: t })), ...(hidden.length > 0 ? [{ groupSlug: { $nin: hidden } }] : [])] };
      const cursor = query.before;
      const bar = cursor?.lastIndexOf('|') ?? -1;
      const after: Filter[] = cursor && bar > 0 ? [{ $or: [{ createdAt: { $lt: cursor.slice(0, bar) } }, { createdAt: cursor.slice(0, bar), _id: { $lt: cursor.slice(bar + 1) } }] }] : [];
      const found = await search.find({ $and: [filter, ...after] }, { sort: { createdAt: -1, _id: -1 }, limit: query.limit + 1, projection: { createdAt: 1 } });
      const hits = found.slice(0, query.limit);
      const byId = new Map((await ctx.views.find({ _id: { $in: hits.map((h) => h._id) } })).map((v) => [v._id, v]));
      const page = hits.map((h) => byId.get(h._id)).filter((v) => v !== undefined);
      const last = page.at(-1);
      const hasMore = found.length > query.limit;
      return { search_results: await ctx.objects.list(caller.userId, page, { forecastOptions: true }), has_more: hasMore, next_before: hasMore && last ? `${last.createdAt}|${last._id}` : null };
    },
    opts,
  );
}
