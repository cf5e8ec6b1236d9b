import { createServiceApp, type ConsistencyGate } from '@castie/platform';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { castieRoutes } from './casties/routes.ts';
import { commentRoutes } from './comments/routes.ts';
import { castiesContext, type CastiesDeps } from './context.ts';
import { feedRoutes } from './feeds/routes.ts';
import { forecastRoutes } from './forecasting/routes.ts';
import { groupPageRoutes } from './group-pages/routes.ts';
import { leaderboardRoutes } from './leaderboards/routes.ts';
import { profileRoutes } from './profiles/routes.ts';

/**
 * The casties service: Casties, forecasts, answers and scores, comments, home feeds, search,
 * profile subsections, group pages and leaderboards. Writes go to its event-sourced aggregates;
 * every query is answered from its own read models (rule 2).
 */
export function buildCastiesApp(deps: CastiesDeps & { consistency?: ConsistencyGate; logger?: FastifyBaseLogger | boolean }): FastifyInstance {
  const app = createServiceApp({ name: 'casties', ...(deps.logger ? { logger: deps.logger } : {}), ...(deps.consistency ? { consistency: deps.consistency } : {}) });
  const ctx = castiesContext(deps);
  castieRoutes(app, ctx);
  forecastRoutes(app, ctx);
  commentRoutes(app, ctx);
  feedRoutes(app, ctx);
  profileRoutes(app, ctx);
  groupPageRoutes(app, ctx);
  leaderboardRoutes(app, ctx);
  return app;
}
