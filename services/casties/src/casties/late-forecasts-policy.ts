import { castieEvents, CASTIES_TOPIC, EventEnvelopeSchema, type CastieEvent } from '@castie/contracts';
import type { Clock, DocumentStore, EventLog, EventStore, LogRecord, ReadModels, Subscription } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import { forecastOfStream } from '../forecasting/decider.ts';
import { FORECASTS, forecastsOfCastie } from '../forecasting/read-model.ts';
import { castieStreamId, type ScoredForecast } from './decider.ts';
import { castieHandler } from './visibility.ts';

/**
 * A policy: every forecast an open-ended Castie accepted gets scored, those placed while its
 * answer was being given too.
 *
 * A forecast is decided on the Castie's stream (open) and appended to its own; the answer scores
 * the forecasts the read model holds, then is appended to the Castie's stream. Nothing orders the
 * two: a forecast decided before the answer may land after the answer read the forecasts, and was
 * then accepted and never scored. So both writes are checked after they land, each against the
 * other's side, and whichever check comes second sees the other write:
 * - a forecast: when its Castie's stream says answered, without a score for its forecaster, it is
 *   scored now;
 * - an answer: once the read models hold every forecast the log has now, those of the Castie
 *   still without a score are scored now.
 * Both may find the same forecast: the Castie's decider scores it once (ScoreLateForecasts).
 * Driven by the log, so a crash between a write and its check loses nothing: the record comes
 * again. A group new to a log starts at its beginning, and scores the forecasts left out before.
 */
export async function startLateForecastsPolicy(options: {
  log: EventLog;
  store: EventStore;
  documents: DocumentStore;
  clock: Clock;
  /** The service's read models: the forecasts appended before an answer's check must be in them. */
  readModels: Pick<ReadModels, 'catchUp'>;
  logger?: FastifyBaseLogger;
}): Promise<Subscription> {
  const forecasts = options.documents.collection(FORECASTS);
  const casties = castieHandler(options.store);
  const score = async (castieId: string, late: readonly ScoredForecast[]): Promise<void> => {
    const { events } = await casties.handle(castieStreamId(castieId), { type: 'ScoreLateForecasts', forecasts: late }, { actor: 'system', now: options.clock.now() });
    const scored = events.flatMap((e) => (e.type === 'ForecastsScored' ? e.data.scores.map((s) => s.userId) : []));
    if (scored.length > 0) options.logger?.info({ castieId, users: scored }, `${scored.length} forecast(s) scored after their Castie's answer`);
  };

  return options.log.subscribe({
    group: 'casties-late-forecasts-policy',
    topics: [CASTIES_TOPIC],
    startAt: () => 'committed',
    handle: async (records) => {
      /** Set once the read models held what the log had when this batch began: after every answer in it. */
      let caughtUp = false;
      for (const record of records) {
        // A forecast's stream holds its ForecastPlaced alone: its key says whose, on which Castie.
        const forecast = forecastOfStream(record.key);
        if (forecast) {
          const { state } = await casties.load(castieStreamId(forecast.castieId));
          if (state.status !== 'answered' || state.scored.includes(forecast.userId)) continue;
          const event = parse(record);
          if (event?.type !== 'ForecastPlaced') continue;
          const d = event.data;
          await score(d.castieId, [{ userId: d.userId, forecastId: d.forecastId, answerId: d.answerId, text: d.text }]);
          continue;
        }
        if (!record.key.startsWith('castie-')) continue;
        const event = parse(record);
        if (event?.type !== 'CastieAnswered') continue;
        if (!caughtUp) {
          // Until they hold them, the batch fails and the log delivers it again.
          if (!(await options.readModels.catchUp([CASTIES_TOPIC], 5000))) throw new Error(`the forecasts of Castie ${event.data.castieId} are checked for scores once the casties read models have caught up`);
          caughtUp = true;
        }
        const unscored = (await forecasts.find(forecastsOfCastie(event.data.castieId))).filter((f) => f.correct === null);
        if (unscored.length > 0) await score(event.data.castieId, unscored.map((f) => ({ userId: f.userId, forecastId: f.forecastId, answerId: f.answerId, text: f.text })));
      }
    },
  });
}

/** The record's event; null when it is not one of the casties topic's (the projections dead-letter it: nothing here to score). */
function parse(record: LogRecord): CastieEvent | null {
  const envelope = EventEnvelopeSchema.safeParse(JSON.parse(record.value));
  if (!envelope.success || !castieEvents.has(envelope.data.type)) return null;
  try {
    return castieEvents.parse(envelope.data) as CastieEvent;
  } catch {
    return null;
  }
}
