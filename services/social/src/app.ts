import { createServiceApp } from '@castie/platform';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { socialContext, type SocialDeps } from './context.ts';
import { frodadRoutes } from './frodads/routes.ts';
import { peopleSearchRoutes } from './people-search/routes.ts';
import { profileFrodadsRoutes } from './profile-frodads/routes.ts';

/**
 * The social service: frodad requests and friendships (its own streams), people search and the
 * frodads section of profiles (from its copy of people, fed by events).
 */
export function buildSocialApp(deps: SocialDeps & { logger?: FastifyBaseLogger | boolean }): FastifyInstance {
  const app = createServiceApp({ name: 'social', logger: deps.logger, ...(deps.readModels ? { readModels: deps.readModels } : {}) });
  const ctx = socialContext(deps);
  frodadRoutes(app, ctx);
  peopleSearchRoutes(app, ctx);
  profileFrodadsRoutes(app, ctx);
  return app;
}
