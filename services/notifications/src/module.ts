import { castieEvents, groupEvents, identityEvents, NOTIFICATIONS_TOPIC, notificationEvents, socialEvents } from '@castie/contracts';
import { createServiceApp, ManagedReadModels, type ReadModelsOfService, type ServiceModule } from '@castie/platform';
import { GroupDirectory, groupsProjections, People, peopleProjections } from '@castie/reference';
import { activityRoutes } from './activity/routes.ts';
import { notificationsContext } from './context.ts';
import { countsRoutes } from './counts/routes.ts';
import { exportRoutes } from './export/routes.ts';
import { LiveChanges } from './live/changes.ts';
import { notificationsProjection } from './read-model/projection.ts';

/** How often Casties that reached their end time are looked for (their creators' live counts change). */
const LIVE_TICK_MS = 1000;

/** The notifications service's read models as code: its copies of people and groups, and the notifications. */
export const notificationsReadModels: ReadModelsOfService = {
  group: 'notifications-read',
  catalogs: [identityEvents, groupEvents, castieEvents, socialEvents, notificationEvents],
  projections: () => [...peopleProjections(), ...groupsProjections(), notificationsProjection()],
};

/**
 * The notifications service: it turns the other services' events into each user's
 * notifications and counts, and owns the user's inbox (reads, sign-ins).
 */
export function notificationsModule(): ServiceModule {
  return {
    name: 'notifications',
    eventStores: [NOTIFICATIONS_TOPIC],
    readModels: notificationsReadModels,
    async build(deps) {
      const store = deps.documents;
      const people = new People(store, deps.timeZone);
      const groups = new GroupDirectory(store, people);
      const live = new LiveChanges({ cache: deps.cache, store, people, groups, clock: deps.clock, ...(deps.logger ? { logger: deps.logger } : {}) });
      const runner = await ManagedReadModels.start({
        group: notificationsReadModels.group,
        log: deps.log,
        store,
        catalogs: notificationsReadModels.catalogs,
        projections: notificationsReadModels.projections(store),
        ...(deps.readModelCopies ? { copies: deps.readModelCopies } : {}),
        ...(deps.projectionsHost ? { host: deps.projectionsHost } : {}),
        observer: deps.metrics,
        committed: live.committed,
        ...(deps.logger ? { logger: deps.logger } : {}),
      });
      const app = createServiceApp({ name: 'notifications', readModels: runner, ...(deps.logger ? { logger: deps.logger } : {}) });
      const ctx = notificationsContext({ inbox: await deps.eventStore(NOTIFICATIONS_TOPIC), documents: store, people, groups, clock: deps.clock, timeZone: deps.timeZone, checkResponses: deps.checkResponses });
      activityRoutes(app, ctx);
      countsRoutes(app, ctx);
      exportRoutes(app, ctx);
      runner.install(app, 'notifications', { checkResponses: deps.checkResponses });
      live.startTicker(LIVE_TICK_MS);
      return {
        app,
        readModels: runner,
        close: async () => {
          await runner.stop();
          await live.stop();
        },
      };
    },
  };
}
