import { api, castieAnswerable } from '@castie/contracts';
import { instantKey, keysetPage, route, wantsPage, type Clock, type Collection, type RouteOptions } from '@castie/platform';
import type { GroupDirectory, People } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { CastieObjects } from '../casties/castie-objects.ts';
import type { CastieView } from '../casties/read-model.ts';
import type { ForecastDoc } from '../forecasting/read-model.ts';

export interface ProfileRoutesDeps {
  views: Collection<CastieView>;
  forecasts: Collection<ForecastDoc>;
  objects: CastieObjects;
  people: Pick<People, 'profileInfo' | 'hidesFrom'>;
  groups: Pick<GroupDirectory, 'hiddenSlugsFor'>;
  clock: Clock;
  routeOptions: RouteOptions;
}

/** Profile subsections: the Casties a person created and the forecasts they made. */
export function profileRoutes(app: FastifyInstance, ctx: ProfileRoutesDeps): void {
  const opts = ctx.routeOptions;

  route(
    app,
    api.casties.myCasties,
    async ({ caller, params, query }) => {
      const { person, info } = await ctx.people.profileInfo(caller.userId, params.handle);
      if (ctx.people.hidesFrom(person, caller.userId)) return { profileInfo: info, myCasties: 'private' as const };
      const hidden = new Set(await ctx.groups.hiddenSlugsFor(caller.userId));
      // Casties whose creator hid their handle would show it here: only the creator sees them.
      const own = person._id === caller.userId;
      const shown = (v: CastieView) => !hidden.has(v.groupSlug) && (own || v.showUsername);
      let views: CastieView[];
      let more = {};
      if (wantsPage(query)) {
        // Newest first in (createdAt, _id) on the creator's index; Casties this viewer may not see are skipped inside the walk.
        const page = await keysetPage(ctx.views, query, { filter: { creatorId: person._id }, key: 'createdAt', direction: -1, parseKey: instantKey, keep: (batch) => batch.filter(shown) });
        views = page.items;
        more = { has_more: page.hasMore, next_before: page.nextBefore };
      } else {
        views = (await ctx.views.find({ creatorId: person._id }, { sort: { createdAt: -1, _id: -1 } })).filter(shown);
      }
      if (query.ids_only) return { profileInfo: info, myCasties: views.map((v) => v._id), ...more };
      const now = ctx.clock.now();
      return { profileInfo: info, myCasties: Object.fromEntries(views.map((v) => [v._id, { question: v.question, answerable: castieAnswerable(v, now) }])), ...more };
    },
    opts,
  );

  route(
    app,
    api.casties.stats,
    async ({ caller, params, query }) => {
      const { person, info } = await ctx.people.profileInfo(caller.userId, params.handle);
      if (ctx.people.hidesFrom(person, caller.userId)) return { profileInfo: info, myForecasts: 'private' as const };
      const hidden = new Set(await ctx.groups.hiddenSlugsFor(caller.userId));
      const shown = (f: ForecastDoc) => !hidden.has(f.groupSlug);
      let forecasts: ForecastDoc[];
      let more = {};
      if (wantsPage(query)) {
        // Newest first in (placedAt, _id) on the forecaster's index; forecasts in hidden groups are skipped inside the walk.
        const page = await keysetPage(ctx.forecasts, query, { filter: { userId: person._id }, key: 'placedAt', direction: -1, parseKey: instantKey, keep: (batch) => batch.filter(shown) });
        forecasts = page.items;
        more = { has_more: page.hasMore, next_before: page.nextBefore };
      } else {
        forecasts = (await ctx.forecasts.find({ userId: person._id }, { sort: { placedAt: -1, _id: -1 } })).filter(shown);
      }
      if (query.ids_only) return { profileInfo: info, myForecasts: forecasts.map((f) => f.castieId), ...more };
      return { profileInfo: info, myForecasts: await ctx.objects.forecastObjects(forecasts), ...more };
    },
    opts,
  );
}
