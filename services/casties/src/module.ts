import { castieEvents, CASTIES_TOPIC, groupEvents, identityEvents, socialEvents } from '@castie/contracts';
import { startProjections, type DocumentStore, type EventLog, type ProjectionRunner, type ServiceModule } from '@castie/platform';
import { catchUpWith, groupsProjections, peopleProjections } from '@castie/reference';
import type { FastifyBaseLogger } from 'fastify';
import { buildCastiesApp } from './app.ts';
import { startAccountDeletedPolicy } from './comments/account-deleted-policy.ts';
import { castiesProjection } from './read-model/projection.ts';

/** The read models of the casties service: its copies of people, friendships and groups, and its own. */
export async function startCastiesReadModels(options: { log: EventLog; documents: DocumentStore; logger?: FastifyBaseLogger }): Promise<ProjectionRunner> {
  const runner = await startProjections({
    group: 'casties-read',
    log: options.log,
    store: options.documents,
    catalogs: [identityEvents, groupEvents, castieEvents, socialEvents],
    projections: [...peopleProjections(options.documents), ...groupsProjections(options.documents), castiesProjection(options.documents)],
    ...(options.logger ? { logger: options.logger } : {}),
  });
  await runner.caughtUp();
  return runner;
}

/** The casties service as the system composes it. */
export function castiesModule(): ServiceModule {
  return {
    name: 'casties',
    async build(deps) {
      const logger = deps.logger?.child({ service: 'casties' });
      const runner = await startCastiesReadModels({ log: deps.log, documents: deps.documents, ...(logger ? { logger } : {}) });
      const store = await deps.eventStore(CASTIES_TOPIC);
      const app = buildCastiesApp({
        store,
        documents: deps.documents,
        log: deps.log,
        clock: deps.clock,
        timeZone: deps.timeZone,
        waitFor: (positions, timeoutMs) => runner.waitFor(positions, timeoutMs),
        consistency: runner,
        checkResponses: deps.checkResponses,
        ...(logger ? { logger } : {}),
      });
      const policy = await startAccountDeletedPolicy({
        log: deps.log,
        store,
        documents: deps.documents,
        clock: deps.clock,
        settled: catchUpWith(deps.log, runner, { topic: CASTIES_TOPIC, timeoutMs: 5000 }),
        ...(logger ? { logger } : {}),
      });
      return {
        app,
        close: async () => {
          await policy.stop();
          await runner.stop();
        },
      };
    },
  };
}
