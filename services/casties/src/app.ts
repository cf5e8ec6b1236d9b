import { castieEvents } from '@castie/contracts';
import { CommandHandler, createServiceApp, RepeatedAnswers, type Clock, type ServiceMetrics, type DocumentStore, type EventStore, type ReadModels, type SortedSets } from '@castie/platform';
import { GroupDirectory, People } from '@castie/reference';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { CastieObjects } from './casties/castie-objects.ts';
import { CASTIE_VIEWS } from './casties/read-model.ts';
import { castieRoutes } from './casties/routes.ts';
import { castieHandler, VisibleCasties } from './casties/visibility.ts';
import { commentDecider } from './comments/decider.ts';
import { COMMENT_COUNTS, COMMENTS } from './comments/read-model.ts';
import { commentRoutes } from './comments/routes.ts';
import { CASTIE_SEARCH } from './feeds/read-model.ts';
import { exportRoutes } from './export/routes.ts';
import { feedRoutes } from './feeds/routes.ts';
import { forecastDecider } from './forecasting/decider.ts';
import { FORECASTERS, FORECASTS, ROSTERS } from './forecasting/read-model.ts';
import { forecastRoutes } from './forecasting/routes.ts';
import { groupPageRoutes } from './group-pages/routes.ts';
import { Leaderboards } from './leaderboards/boards.ts';
import { BOARD_ENTRIES } from './leaderboards/read-model.ts';
import { leaderboardRoutes } from './leaderboards/routes.ts';
import { profileRoutes } from './profiles/routes.ts';

export interface CastiesDeps {
  /** Event store of the `casties` topic (this service is its only writer). */
  store: EventStore;
  /** This service's read models: its own, plus its copies of people, friendships and groups. */
  documents: DocumentStore;
  /** The leaderboards' sorted sets, which the leaderboards projection keeps (see `castiesProjections`). */
  boards: SortedSets;
  /** How far those read models are in the log (session consistency, catching up). */
  readModels: ReadModels;
  clock: Clock;
  /** IANA time zone in which end dates and times are read and all dates are shown. */
  timeZone: string;
  checkResponses?: boolean;
  logger?: FastifyBaseLogger | boolean;
  /** Counts the pages given again (RepeatedAnswers). */
  metrics?: Pick<ServiceMetrics, 'repeatedAnswerLookup'>;
}

/**
 * The casties service: Casties, forecasts, answers and scores, comments, home feeds, search,
 * profile subsections, group pages and leaderboards. Writes go to its event-sourced aggregates;
 * every query is answered from its own read models (rule 2). Each feature receives only what it
 * names.
 */
export function buildCastiesApp(deps: CastiesDeps): FastifyInstance {
  const app = createServiceApp({ name: 'casties', readModels: deps.readModels, ...(deps.logger ? { logger: deps.logger } : {}) });
  const { documents, clock, timeZone, readModels } = deps;
  const routeOptions = { checkResponses: deps.checkResponses ?? false };

  const casties = castieHandler(deps.store);
  const views = documents.collection(CASTIE_VIEWS);
  const forecasts = documents.collection(FORECASTS);
  const commentDocs = documents.collection(COMMENTS);
  // A person who just signed up or a group an operator just created is outside any user's
  // session: before answering 404 for them, the copy catches up with the log.
  const people = new People(documents, timeZone, readModels);
  const groups = new GroupDirectory(documents, people, readModels);
  const visible = new VisibleCasties({ views, casties, groups, readModels });
  const objects = new CastieObjects({ views, forecasts, rosters: documents.collection(ROSTERS), forecasters: documents.collection(FORECASTERS), commentCounts: documents.collection(COMMENT_COUNTS), people, timeZone, clock });

  castieRoutes(app, { casties, views, forecasts, visible, objects, groups, readModels, clock, timeZone, routeOptions });
  forecastRoutes(app, { casties, forecasts: new CommandHandler(deps.store, castieEvents, forecastDecider), groups, clock, routeOptions });
  commentRoutes(app, { comments: new CommandHandler(deps.store, castieEvents, commentDecider), commentDocs, visible, people, clock, timeZone, routeOptions });
  const answers = new RepeatedAnswers({ version: () => documents.committedVersion(), clock, ...(deps.metrics ? { observer: deps.metrics } : {}) });
  feedRoutes(app, { views, search: documents.collection(CASTIE_SEARCH), objects, groups, answers, routeOptions });
  profileRoutes(app, { views, forecasts, objects, people, groups, clock, routeOptions });
  const boards = new Leaderboards(deps.boards, documents.collection(BOARD_ENTRIES), people);
  groupPageRoutes(app, { views, forecasts, objects, groups, boards, routeOptions });
  leaderboardRoutes(app, { boards, groups, routeOptions });
  exportRoutes(app, { views, forecasts, commentDocs, groups, clock, timeZone });
  return app;
}
