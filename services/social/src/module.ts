import { castieEvents, groupEvents, identityEvents, SOCIAL_TOPIC, socialEvents } from '@castie/contracts';
import { ManagedReadModels, type ServiceModule } from '@castie/platform';
import { peopleProjections } from '@castie/reference';
import { buildSocialApp } from './app.ts';

/**
 * Social as the system composes it: its copy of people and friendships is replayed from the log
 * before it answers, then kept current; requests that carry the user's last write positions wait
 * for it (session consistency).
 */
export function socialModule(): ServiceModule {
  return {
    name: 'social',
    async build(deps) {
      const logger = deps.logger;
      const store = deps.documents;
      const runner = await ManagedReadModels.start({
        group: 'social-read',
        log: deps.log,
        store,
        catalogs: [identityEvents, groupEvents, castieEvents, socialEvents],
        projections: peopleProjections(store),
        ...(deps.readModelCopies ? { copies: deps.readModelCopies } : {}),
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
