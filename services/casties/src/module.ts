import { castieEvents, CASTIES_TOPIC, groupEvents, identityEvents, socialEvents } from '@castie/contracts';
import { createStoredSortedSets, ManagedReadModels, type DocumentStore, type EventLog, type ProjectionObserver, type ProjectionsHost, type Projection, type ReadModelCopies, type ReadModelsOfService, type ServiceModule, type SortedSets } from '@castie/platform';
import { groupsProjections, peopleProjections } from '@castie/reference';
import type { FastifyBaseLogger } from 'fastify';
import { buildCastiesApp } from './app.ts';
import { castieViewsProjection } from './casties/read-model.ts';
import { startLateForecastsPolicy } from './casties/late-forecasts-policy.ts';
import { startAccountDeletedPolicy } from './comments/account-deleted-policy.ts';
import { commentsProjection } from './comments/read-model.ts';
import { searchIndexProjection } from './feeds/read-model.ts';
import { forecastsProjection } from './forecasting/read-model.ts';
import { leaderboardsProjection } from './leaderboards/read-model.ts';

/**
 * The read models of the casties service: its copies of people, friendships and groups, and each
 * feature's own. The leaderboards come right after people and groups: in each batch they read
 * what those two just applied.
 */
export const castiesProjections = (boards: SortedSets): Projection[] => [
  ...peopleProjections(),
  ...groupsProjections(),
  leaderboardsProjection(boards),
  castieViewsProjection(),
  forecastsProjection(),
  commentsProjection(),
  searchIndexProjection(),
];

/** The casties service's read models as code (its module runs them; a first start may build them in a worker). */
export const castiesReadModels: ReadModelsOfService = {
  group: 'casties-read',
  catalogs: [identityEvents, groupEvents, castieEvents, socialEvents],
  projections: (store, sortedSets) => castiesProjections(sortedSets ?? createStoredSortedSets(store)),
};

/** Starts the casties service's read models and resolves once they applied what the log held at start. */
export async function startCastiesReadModels(options: { log: EventLog; documents: DocumentStore; boards: SortedSets; copies?: ReadModelCopies; host?: ProjectionsHost; observer?: ProjectionObserver; logger?: FastifyBaseLogger }): Promise<ManagedReadModels> {
  return ManagedReadModels.start({
    group: castiesReadModels.group,
    log: options.log,
    store: options.documents,
    catalogs: castiesReadModels.catalogs,
    projections: castiesReadModels.projections(options.documents, options.boards),
    ...(options.copies ? { copies: options.copies } : {}),
    ...(options.host ? { host: options.host } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

/** The casties service as the system composes it. */
export function castiesModule(): ServiceModule {
  return {
    name: 'casties',
    eventStores: [CASTIES_TOPIC],
    readModels: castiesReadModels,
    async build(deps) {
      const logger = deps.logger;
      // Shared sorted sets (Redis) when the profile has them, else beside the read models.
      const boards = deps.sortedSets ?? createStoredSortedSets(deps.documents);
      const readModels = await startCastiesReadModels({ log: deps.log, documents: deps.documents, boards, ...(deps.readModelCopies ? { copies: deps.readModelCopies } : {}), ...(deps.projectionsHost ? { host: deps.projectionsHost } : {}), observer: deps.metrics, ...(logger ? { logger } : {}) });
      const store = await deps.eventStore(CASTIES_TOPIC);
      const app = buildCastiesApp({ store, documents: deps.documents, boards, readModels, clock: deps.clock, timeZone: deps.timeZone, checkResponses: deps.checkResponses, metrics: deps.metrics, ...(logger ? { logger } : {}) });
      readModels.install(app, 'casties', { checkResponses: deps.checkResponses });
      const policyDeps = { log: deps.log, store, documents: deps.documents, clock: deps.clock, readModels, ...(logger ? { logger } : {}) };
      const policies = [await startAccountDeletedPolicy(policyDeps), await startLateForecastsPolicy(policyDeps)];
      return {
        app,
        readModels,
        close: async () => {
          for (const policy of policies) await policy.stop();
          await readModels.stop();
        },
      };
    },
  };
}
