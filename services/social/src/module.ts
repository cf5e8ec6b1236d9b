import { castieEvents, groupEvents, identityEvents, SOCIAL_TOPIC, socialEvents } from '@castie/contracts';
import { ManagedReadModels, type ReadModelsOfService, type ServiceModule } from '@castie/platform';
import { peopleProjections } from '@castie/reference';
import { buildSocialApp } from './app.ts';

/** The social service's read models as code: its copy of people and friendships. */
export const socialReadModels: ReadModelsOfService = {
  group: 'social-read',
  catalogs: [identityEvents, groupEvents, castieEvents, socialEvents],
  projections: () => peopleProjections(),
};

/**
 * Social as the system composes it: its copy of people and friendships is replayed from the log
 * before it answers, then kept current; requests that carry the user's last write positions wait
 * for it (session consistency).
 */
export function socialModule(): ServiceModule {
  return {
    name: 'social',
    eventStores: [SOCIAL_TOPIC],
    readModels: socialReadModels,
    async build(deps) {
      const logger = deps.logger;
      const store = deps.documents;
      const runner = await ManagedReadModels.start({
        group: socialReadModels.group,
        log: deps.log,
        store,
        catalogs: socialReadModels.catalogs,
        projections: socialReadModels.projections(store),
        ...(deps.readModelCopies ? { copies: deps.readModelCopies } : {}),
        ...(deps.projectionsHost ? { host: deps.projectionsHost } : {}),
        observer: deps.metrics,
        ...(logger ? { logger } : {}),
      });
      const app = buildSocialApp({
        frodads: await deps.eventStore(SOCIAL_TOPIC),
        documents: store,
        clock: deps.clock,
        readModels: runner,
        timeZone: deps.timeZone,
        checkResponses: deps.checkResponses,
        ...(logger ? { logger } : {}),
      });
      runner.install(app, 'social', { checkResponses: deps.checkResponses });
      return { app, readModels: runner, close: () => runner.stop() };
    },
  };
}
