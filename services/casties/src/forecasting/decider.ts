import { DomainError, messages, type CastieEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';
import { isEnded, parseAnswerId, type CastieState } from '../casties/decider.ts';

/**
 * One user's forecast on one Castie, stream `forecast-<castieUuid>-<userId>`. The stream is
 * created once (expected version `no_stream`), so of many concurrent forecasts by one user exactly
 * one wins, while different users never touch the same stream: a popular Castie is no bottleneck.
 * The Castie's own stream is only read, to check that it is open.
 */
export type ForecastState = { status: 'none' } | { status: 'placed'; forecastId: number };

export interface PlaceForecast {
  type: 'PlaceForecast';
  userId: string;
  /** The Castie as its stream says now, loaded by the handler. */
  castie: CastieState;
  /** False when the Castie belongs to an approval-required group the user was not granted. */
  visible: boolean;
  /** Drawn by the handler (a random 48-bit integer). */
  forecastId: number;
  answerId: string | number | undefined;
  forecastText: string | undefined;
  now: Date;
}

const cannot = (message: string) => new DomainError('cannot_forecast', message);

export const forecastDecider: Decider<PlaceForecast, CastieEvent, ForecastState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    const { castie } = command;
    if (castie.status === 'none' || !command.visible) throw new DomainError('object_not_found', messages.castieNotFound);
    if (state.status === 'placed') throw cannot('the User has already forecasted this Castie');
    if (isEnded(castie, command.now)) throw cannot('this castie is not accepting forecasts- end date/time has passed');
    const facts = castie.castie;
    let answerId: number | null = null;
    let text: string;
    if (facts.allowWriteIn) {
      text = command.forecastText?.trim() ?? '';
      if (!text) throw cannot('forecast_text was not sent in request');
    } else {
      const id = parseAnswerId(command.answerId);
      if (id === undefined) throw cannot('answer_id was not sent in request');
      const option = facts.options.find((o) => o.answerId === id);
      if (!option) throw cannot('the answer_id provided does not correspond to a valid answer option for this castie');
      answerId = option.answerId;
      text = option.text;
    }
    return [
      {
        type: 'ForecastPlaced',
        data: { castieId: facts.castieId, groupSlug: facts.groupSlug, userId: command.userId, forecastId: command.forecastId, answerId, text, placedAt: command.now.toISOString() },
      },
    ];
  },

  evolve(state, event) {
    if (event.type === 'ForecastPlaced') return { status: 'placed', forecastId: event.data.forecastId };
    return state;
  },
};

export const forecastStreamId = (castieId: string, userId: string): string => `forecast-${castieId}-${userId}`;

const FORECAST_STREAM = /^forecast-([0-9a-f]{32})-([0-9a-f]{32})$/;

/** The Castie and the user of a forecast's stream (a log record's key is its stream's id); null for any other stream. */
export function forecastOfStream(streamId: string): { castieId: string; userId: string } | null {
  const match = FORECAST_STREAM.exec(streamId);
  return match ? { castieId: match[1]!, userId: match[2]! } : null;
}
