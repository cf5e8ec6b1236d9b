import { castieEvents, CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { policyEventOf, POLICY_BATCH, type Clock, type DocumentStore, type EventLog, type EventStore, type LogRecord, type ReadModels, type Subscription } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import { forecastOfStream } from '../forecasting/decider.ts';
import { FORECASTS, forecastDocId, forecastsOfCastie } from '../forecasting/read-model.ts';
import { castieStreamId, type CastieState, type ScoredForecast } from './decider.ts';
import { castieHandler } from './visibility.ts';

/**
 * A policy: every forecast a Castie accepted gets scored, those that landed while its answer was
 * being given too (an open-ended Castie's, or one decided just before a Castie's end).
 *
 * A forecast is decided on the Castie's stream (open) and appended to its own; the answer scores
 * the forecasts the read model holds, then is appended to the Castie's stream. Nothing orders the
 * two: a forecast decided before the answer may land after the answer read the forecasts, and was
 * then accepted and never scored. So both writes are checked after they land, each against the
 * other's side, and whichever check comes second sees the other write:
 * - a forecast: when its Castie's stream says answered without a score for it, it is scored now;
 * - an answer: once the read models hold every forecast the log has now, those of the Castie
 *   still without a score are scored now.
 * Both may find the same forecast: the Castie's decider scores it once (ScoreLateForecasts).
 * Driven by the log, so a crash between a write and its check loses nothing: the record comes
 * again. A group new to a log starts at its beginning, and scores the forecasts left out before.
 * A Castie's state keeps counts, not its forecasters: the answer's scores are read from its stream
 * only on the rare path where a forecast seems to lack one.
 *
 * Both checks ask the read models in SQL for forecasts without a score, and read documents only
 * when some are: on a first pass over a history nearly every forecast is on an answered Castie
 * and scored, and reading each one's document (twice: at its own record and at its Castie's
 * answer) made that pass parse the whole forecasts read model and fill the heap with it.
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
  /**
   * Scores those of `late` the answer did not: read from the answer itself (the read models may
   * be behind it), on this rare path only; the Castie's state keeps counts, not every forecaster
   * of a popular Castie. Those scored late already, the decider leaves out.
   */
  const score = async (castieId: string, late: readonly ScoredForecast[]): Promise<void> => {
    const answered = (await options.store.readStream(castieStreamId(castieId))).events.find((e) => e.type === 'CastieAnswered');
    const event = answered && (castieEvents.parse(answered) as CastieEvent);
    const byAnswer = new Set(event?.type === 'CastieAnswered' ? event.data.scores.map((s) => s.userId) : []);
    const left = late.filter((f) => !byAnswer.has(f.userId));
    if (left.length === 0) return;
    const { events } = await casties.handle(castieStreamId(castieId), { type: 'ScoreLateForecasts', forecasts: left }, { actor: 'system', now: options.clock.now() });
    const scored = events.flatMap((e) => (e.type === 'ForecastsScored' ? e.data.scores.map((s) => s.userId) : []));
    if (scored.length > 0) options.logger?.info({ castieId, users: scored }, `${scored.length} forecast(s) scored after their Castie's answer`);
  };

  return options.log.subscribe({
    group: 'casties-late-forecasts-policy',
    topics: [CASTIES_TOPIC],
    startAt: () => 'committed',
    maxBatch: POLICY_BATCH,
    handle: async (records) => {
      /** Forecasts of this batch on answered Casties, not scored late: looked up together in the read models. */
      const onAnswered: { id: string; record: LogRecord }[] = [];
      /** Set once the read models held what the log had when this batch began: after every answer in it. */
      let caughtUp = false;
      /**
       * The Casties this batch's forecasts are on, each loaded once per batch (at its first
       * forecast here). Every record of the batch was in the log before that load: a Castie it
       * shows open was answered after them, and that answer's own check will find them; an answer
       * never goes back, and forecasts scored since it was loaded are left out again by score()
       * and the decider.
       */
      const states = new Map<string, CastieState>();
      for (const record of records) {
        // A forecast's stream holds its ForecastPlaced alone: its key says whose, on which Castie.
        const forecast = forecastOfStream(record.key);
        if (forecast) {
          let state = states.get(forecast.castieId);
          if (!state) states.set(forecast.castieId, (state = (await casties.load(castieStreamId(forecast.castieId))).state));
          if (state.status === 'answered' && !state.lateScored.includes(forecast.userId)) onAnswered.push({ id: forecastDocId(forecast.castieId, forecast.userId), record });
          continue;
        }
        if (!record.key.startsWith('castie-')) continue;
        const event = policyEventOf(castieEvents, record);
        if (event?.type !== 'CastieAnswered') continue;
        // Every answer of this batch was in the log before this call: one catch-up serves them all.
        if (!caughtUp) {
          // Until they hold them, the batch fails and the log delivers it again.
          if (!(await options.readModels.catchUp([CASTIES_TOPIC], 5000))) throw new Error(`the forecasts of Castie ${event.data.castieId} are checked for scores once the casties read models have caught up`);
          caughtUp = true;
        }
        const unscored = await forecasts.find({ ...forecastsOfCastie(event.data.castieId), correct: null });
        if (unscored.length > 0) {
          await score(event.data.castieId, unscored.map((f) => ({ userId: f.userId, forecastId: f.forecastId, answerId: f.answerId, text: f.text })));
          states.delete(event.data.castieId);
        }
      }
      if (onAnswered.length === 0) return;
      // Scored, as the read models show it (all of them, on a first pass over a history): skipped,
      // counted without reading a document. Those the read models do not hold yet are checked
      // against the answer itself (score).
      // Distinct: a record the log delivers twice would make the count fall short.
      const ids = [...new Set(onAnswered.map((f) => f.id))];
      if ((await forecasts.countDocuments({ _id: { $in: ids }, correct: { $ne: null } })) === ids.length) return;
      const docs = await forecasts.byIds(ids);
      for (const { id, record } of onAnswered) {
        if (docs.get(id)?.correct != null) continue;
        const event = policyEventOf(castieEvents, record);
        if (event?.type !== 'ForecastPlaced') continue;
        const d = event.data;
        await score(d.castieId, [{ userId: d.userId, forecastId: d.forecastId, answerId: d.answerId, text: d.text }]);
      }
    },
  });
}
