import { api, CASTIES_TOPIC, DomainError, messages, needsAnswerFilter } from '@castie/contracts';
import { newId, route, Unavailable, type Caller, type Clock, type Collection, type ReadModels, type RouteOptions } from '@castie/platform';
import type { GroupDirectory } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import { randomInt } from 'node:crypto';
import { forecastsOfCastie, type ForecastDoc } from '../forecasting/read-model.ts';
import type { CastieObjects } from './castie-objects.ts';
import { castieStreamId } from './decider.ts';
import type { CastieView } from './read-model.ts';
import type { CastieHandler, VisibleCasties } from './visibility.ts';

/** A random positive integer below 2^48: ids the API shows as integers, unique without a counter. */
export const randomId48 = (): number => randomInt(1, 2 ** 48 - 1);

export interface CastieRoutesDeps {
  casties: CastieHandler;
  views: Collection<CastieView>;
  forecasts: Collection<ForecastDoc>;
  visible: VisibleCasties;
  objects: CastieObjects;
  groups: Pick<GroupDirectory, 'bySlug' | 'canCreate'>;
  readModels: ReadModels;
  clock: Clock;
  timeZone: string;
  routeOptions: RouteOptions;
}

/** Creating a Castie, its detail, answering it, reporting it, and the creator's count of Casties to answer. */
export function castieRoutes(app: FastifyInstance, ctx: CastieRoutesDeps): void {
  const opts = ctx.routeOptions;
  const meta = (caller: Caller) => ({ actor: caller.userId, now: ctx.clock.now() });

  route(
    app,
    api.casties.createCastie,
    async ({ caller, body, wrote }) => {
      const group = await ctx.groups.bySlug(body.group_slug);
      const mayCreate = group !== null && (await ctx.groups.canCreate(caller.userId, group));
      const castieId = newId();
      const allowWriteIn = body.answer_type === 'Write-in answers';
      const texts = allowWriteIn ? [] : body.answer_option.map((o) => o.trim()).filter((o) => o !== '');
      const ids = new Set<number>();
      while (ids.size < texts.length) ids.add(randomId48());
      const idList = [...ids];
      const now = ctx.clock.now();
      const created = await ctx.casties.handle(
        castieStreamId(castieId),
        {
          type: 'CreateCastie',
          castieId,
          creatorId: caller.userId,
          groupSlug: group?.slug ?? body.group_slug,
          group: { exists: group !== null, mayCreate },
          pollType: body.poll_type,
          closesOnDate: body.closes_on_date,
          closesOnTime: body.closes_on_time,
          timeZone: ctx.timeZone,
          question: body.question,
          showUsername: body.display_created_by,
          allowWriteIn,
          options: texts.map((text, i) => ({ answerId: idList[i]!, text })),
          now,
        },
        { actor: caller.userId, now },
      );
      wrote(created.positions);
      return { castie: 'created successfully', castie_uuid: castieId };
    },
    opts,
  );

  route(
    app,
    api.casties.needsAnswer,
    async ({ caller }) => {
      // Only Casties with an end date count (spec): open-ended ones never "need" an answer.
      const mine = await ctx.views.find(needsAnswerFilter(caller.userId, ctx.clock.now()), { projection: { _id: 1 } });
      return { needs_answer: mine.length > 0, number_needing_answer: mine.length };
    },
    opts,
  );

  route(
    app,
    api.casties.detail,
    async ({ caller, params }) => {
      const view = await ctx.visible.view(params.uuid, caller.userId);
      return { castie: await ctx.objects.detailed(caller.userId, view) };
    },
    opts,
  );

  route(
    app,
    api.casties.answerView,
    async ({ caller, params }) => {
      const view = await ctx.visible.view(params.uuid, caller.userId);
      return {
        uuid: view._id,
        question: view.question,
        group: view.groupSlug,
        allowWriteIn: view.allowWriteIn,
        forecastsCount: view.forecastsCount,
        forecastCount: view.forecastsCount,
        ...(view.allowWriteIn ? {} : { answer_options: Object.fromEntries(view.options.map((o) => [String(o.answerId), o.text])) }),
      };
    },
    opts,
  );

  route(
    app,
    api.casties.answer,
    async ({ caller, params, body, wrote }) => {
      const { facts } = await ctx.visible.facts(params.uuid, caller.userId);
      // Scores need every forecast: wait until the read model holds all the topic has now. Scored
      // from a read model still behind, the forecasts it lacked would never earn their points.
      if (!(await ctx.readModels.catchUp([CASTIES_TOPIC], 5000))) throw new Unavailable('the forecasts on this Castie are still being counted: try again in a moment', 2);
      const forecasts = await ctx.forecasts.find(forecastsOfCastie(facts.castieId));
      const answered = await ctx.casties.handle(
        castieStreamId(facts.castieId),
        {
          type: 'AnswerCastie',
          userId: caller.userId,
          answerId: body.answer_id,
          keyword: body.keyword,
          forecasts: forecasts.map((f) => ({ userId: f.userId, forecastId: f.forecastId, answerId: f.answerId, text: f.text })),
          now: ctx.clock.now(),
        },
        meta(caller),
      );
      wrote(answered.positions);
      await ctx.readModels.waitFor(answered.positions, 5000);
      const view = await ctx.views.findOne({ _id: facts.castieId });
      if (!view) throw new DomainError('object_not_found', messages.castieNotFound);
      return { castie: await ctx.objects.detailed(caller.userId, view) };
    },
    opts,
  );

  route(
    app,
    api.casties.reportCastie,
    async ({ caller, params, wrote }) => {
      await ctx.visible.facts(params.uuid, caller.userId);
      const reported = await ctx.casties.handle(castieStreamId(params.uuid), { type: 'ReportCastie', reporterId: caller.userId }, meta(caller));
      wrote(reported.positions);
      return { message: 'castie has been reported' };
    },
    opts,
  );
}
