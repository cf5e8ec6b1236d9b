import { api } from '@castie/contracts';
import { route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { CastiesContext } from '../context.ts';
import { answerable } from '../read-model/castie-objects.ts';

/** Profile subsections: the Casties a person created and the forecasts they made. */
export function profileRoutes(app: FastifyInstance, ctx: CastiesContext): void {
  const opts = { checkResponses: ctx.checkResponses };

  route(
    app,
    api.casties.myCasties,
    async ({ caller, params, query }) => {
      const { person, info } = await ctx.people.profileInfo(caller.userId, params.handle);
      if (ctx.people.hidesFrom(person, caller.userId)) return { profileInfo: info, myCasties: 'private' as const };
      const hidden = new Set(await ctx.groups.hiddenSlugsFor(caller.userId));
      const views = (await ctx.views.find({ creatorId: person._id }, { sort: { createdAt: -1, _id: -1 } })).filter((v) => !hidden.has(v.groupSlug));
      if (query.ids_only) return { profileInfo: info, myCasties: views.map((v) => v._id) };
      const now = ctx.clock.now();
      return { profileInfo: info, myCasties: Object.fromEntries(views.map((v) => [v._id, { question: v.question, answerable: answerable(v, now) }])) };
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
      const forecasts = (await ctx.forecastDocs.find({ userId: person._id }, { sort: { placedAt: -1, _id: -1 } })).filter((f) => !hidden.has(f.groupSlug));
      if (query.ids_only) return { profileInfo: info, myForecasts: forecasts.map((f) => f.castieId) };
      return { profileInfo: info, myForecasts: await ctx.objects.forecastObjects(forecasts) };
    },
    opts,
  );
}
