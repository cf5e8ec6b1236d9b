import { api, DomainError, GROUPS_TOPIC, messages, type CastieEvent } from '@castie/contracts';
import { route, type Clock, type CommandHandler, type RouteOptions } from '@castie/platform';
import type { GroupDirectory } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import { castieStreamId } from '../casties/decider.ts';
import { randomId48 } from '../casties/routes.ts';
import type { CastieHandler } from '../casties/visibility.ts';
import { forecastStreamId, type ForecastState, type PlaceForecast } from './decider.ts';

export interface ForecastRoutesDeps {
  casties: CastieHandler;
  forecasts: CommandHandler<PlaceForecast, CastieEvent, ForecastState>;
  groups: Pick<GroupDirectory, 'canSee'>;
  clock: Clock;
  routeOptions: RouteOptions;
}

/** Placing one forecast: its own stream, created once (see decider.ts). */
export function forecastRoutes(app: FastifyInstance, ctx: ForecastRoutesDeps): void {
  route(
    app,
    api.casties.forecast,
    async ({ caller, params, body, wrote }) => {
      // The Castie's stream is only read: many users forecasting one Castie never contend.
      const { state } = await ctx.casties.load(castieStreamId(params.uuid));
      if (state.status === 'none') throw new DomainError('object_not_found', messages.castieNotFound);
      const visible = await ctx.groups.canSee(caller.userId, state.castie.groupSlug);
      const now = ctx.clock.now();
      const placed = await ctx.forecasts.handle(
        forecastStreamId(params.uuid, caller.userId),
        { type: 'PlaceForecast', userId: caller.userId, castie: state, visible, forecastId: randomId48(), answerId: body.answer_id, forecastText: body.forecast_text, now },
        { actor: caller.userId, now },
      );
      wrote(placed.positions);
      const event = placed.events[0];
      if (!event || event.type !== 'ForecastPlaced') throw new Error('the forecast produced no event');
      return { message: 'forecast successfully recorded', castie_uuid: params.uuid, answer_id: event.data.answerId, user_forecast_text: event.data.text };
    },
    // Decided on the Castie's and the forecast's streams (always current); of the read models only
    // group access is read. So the author's next forecast waits for their follows, never for the
    // projections of their last forecast.
    { ...ctx.routeOptions, sessionTopics: [GROUPS_TOPIC] },
  );
}
