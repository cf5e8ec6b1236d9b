import { createServiceApp } from '@castie/platform';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { administrationRoutes } from './administration/routes.ts';
import { groupsContext, type GroupsDeps } from './context.ts';
import { followerRoutes } from './followers/routes.ts';
import { followingRoutes } from './following/routes.ts';
import { listingRoutes } from './listing/routes.ts';
import { profileGroupsRoutes } from './profile-groups/routes.ts';
import { requestRoutes } from './requests/routes.ts';

/**
 * The groups service: groups and their configuration (admin API), follows and access approval,
 * group listings, followers and the groups subsection of profiles. Writes decide on the group
 * and membership streams; reads come from its own copy of people, friendships and groups.
 */
export function buildGroupsApp(deps: GroupsDeps & { logger?: FastifyBaseLogger | boolean }): FastifyInstance {
  const app = createServiceApp({ name: 'groups', readModels: deps.readModels, ...(deps.logger ? { logger: deps.logger } : {}) });
  const ctx = groupsContext(deps);
  administrationRoutes(app, ctx);
  followingRoutes(app, ctx);
  requestRoutes(app, ctx);
  listingRoutes(app, ctx);
  followerRoutes(app, ctx);
  profileGroupsRoutes(app, ctx);
  return app;
}
