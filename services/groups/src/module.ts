import { castieEvents, groupEvents, GROUPS_TOPIC, identityEvents, socialEvents } from '@castie/contracts';
import { ManagedReadModels, type DocumentStore, type EventLog, type ProjectionObserver, type ProjectionsHost, type ReadModelCopies, type ReadModelsOfService, type ServiceModule } from '@castie/platform';
import { groupsProjections, peopleProjections } from '@castie/reference';
import type { FastifyBaseLogger } from 'fastify';
import { startOpenGroupPolicy } from './administration/open-group-policy.ts';
import { buildGroupsApp } from './app.ts';
import { groupsContext } from './context.ts';

/** The groups service's read models as code: its copies of people, friendships and groups. */
export const groupsReadModels: ReadModelsOfService = {
  group: 'groups-read',
  catalogs: [identityEvents, groupEvents, castieEvents, socialEvents],
  projections: () => [...peopleProjections(), ...groupsProjections()],
};

/** The read models of the groups service: its copies of people, friendships and groups, replayed to the log's end. */
export async function startGroupsReadModels(options: { log: EventLog; documents: DocumentStore; copies?: ReadModelCopies; host?: ProjectionsHost; observer?: ProjectionObserver; logger?: FastifyBaseLogger }): Promise<ManagedReadModels> {
  return ManagedReadModels.start({
    group: groupsReadModels.group,
    log: options.log,
    store: options.documents,
    catalogs: groupsReadModels.catalogs,
    projections: groupsReadModels.projections(options.documents),
    ...(options.copies ? { copies: options.copies } : {}),
    ...(options.host ? { host: options.host } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

/** The groups service as the system composes it. */
export function groupsModule(): ServiceModule {
  return {
    name: 'groups',
    eventStores: [GROUPS_TOPIC],
    readModels: groupsReadModels,
    async build(deps) {
      const runner = await startGroupsReadModels({ log: deps.log, documents: deps.documents, ...(deps.readModelCopies ? { copies: deps.readModelCopies } : {}), ...(deps.projectionsHost ? { host: deps.projectionsHost } : {}), observer: deps.metrics, ...(deps.logger ? { logger: deps.logger } : {}) });
      const groupsDeps = { store: await deps.eventStore(GROUPS_TOPIC), documents: deps.documents, readModels: runner, clock: deps.clock, media: deps.media, timeZone: deps.timeZone, checkResponses: deps.checkResponses };
      const app = buildGroupsApp({ ...groupsDeps, ...(deps.logger ? { logger: deps.logger } : {}) });
      runner.install(app, 'groups', { checkResponses: deps.checkResponses });
      const policy = await startOpenGroupPolicy({ log: deps.log, ctx: groupsContext(groupsDeps), ...(deps.logger ? { logger: deps.logger } : {}) });
      return {
        app,
        readModels: runner,
        close: async () => {
          await policy.stop();
          await runner.stop();
        },
      };
    },
  };
}
