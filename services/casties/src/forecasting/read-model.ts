import { CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { collectionSpec, updateOnce, type Doc, type DocumentStore, type Projection } from '@castie/platform';

/** One forecast (by Castie, by user), scored once its Castie is answered. `_id`: see forecastDocId. */
export interface ForecastDoc extends Doc {
  castieId: string;
  groupSlug: string;
  userId: string;
  forecastId: number;
  answerId: number | null;
  text: string;
  placedAt: string;
  /** null until the Castie is answered. */
  correct: boolean | null;
  points: number;
}

/**
 * Indexes: a Castie's forecasts, by user (friends' forecasts on a page of Casties, in one query;
 * every forecast when the answer is scored); a person's forecasts newest first (profile stats);
 * a person's forecasts in a group (group accuracy).
 */
export const FORECASTS = collectionSpec<ForecastDoc>({
  name: 'castie_forecasts',
  indexes: [{ keys: { castieId: 1, userId: 1 } }, { keys: { userId: 1, placedAt: -1, _id: -1 } }],
});

export const forecastDocId = (castieId: string, userId: string): string => `${castieId}:${userId}`;

/** The forecasts read model, fed by the casties topic (placed forecasts, and their scores once answered). */
export function forecastsProjection(store: DocumentStore): Projection {
  const forecasts = store.collection(FORECASTS);
  return {
    name: 'forecasts',
    version: 1,
    topics: [CASTIES_TOPIC],
    collections: [FORECASTS],
    async apply(event, _envelope, record) {
      const e = event as CastieEvent;
      if (e.type === 'ForecastPlaced') {
        const d = e.data;
        await updateOnce(forecasts, forecastDocId(d.castieId, d.userId), record, {
          $set: { castieId: d.castieId, groupSlug: d.groupSlug, userId: d.userId, forecastId: d.forecastId, answerId: d.answerId, text: d.text, placedAt: d.placedAt },
          $setOnInsert: { correct: null, points: 0 },
        });
      } else if (e.type === 'CastieAnswered') {
        // A score may arrive before its forecast (another partition): the forecast fills in the rest.
        for (const s of e.data.scores) await updateOnce(forecasts, forecastDocId(e.data.castieId, s.userId), record, { $set: { correct: s.correct, points: s.points } });
      }
    },
  };
}
