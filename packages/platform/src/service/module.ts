import type { EventCatalog, ServiceName } from '@castie/contracts';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Cache, SortedSets } from '../ports/cache.ts';
import type { Clock } from '../ports/clock.ts';
import type { DocumentStore } from '../ports/document-store.ts';
import type { EventLog } from '../ports/event-log.ts';
import type { EventStore } from '../ports/event-store.ts';
import type { Mailer } from '../ports/mail.ts';
import type { MediaStore } from '../ports/media.ts';
import type { ServiceMetrics } from '../observability/metrics.ts';
import type { Projection, ProjectionRunner, ProjectionsHost, ReadModelCopies } from './projections.ts';

/** What every service is built from; the profile (embedded or cluster) decides the adapters. */
export interface ServiceDeps {
  log: EventLog;
  /** The event store of a topic this service owns (it is the only writer of it). */
  eventStore(topic: string): Promise<EventStore>;
  /** This service's own store for read models (nobody else reads or writes it). */
  documents: DocumentStore;
  /** Finished copies of the same read models in other stores of this process, copied instead of rebuilt (embedded profile). */
  readModelCopies?: ReadModelCopies;
  /** Where the read models' projections run once caught up at start (embedded: a thread of their own); absent, on the event loop. */
  projectionsHost?: ProjectionsHost;
  clock: Clock;
  media: MediaStore;
  cache: Cache;
  /**
   * Sorted sets shared by the processes (Redis) for leaderboards; absent, a service keeps them
   * in its own read-model store (embedded).
   */
  sortedSets?: SortedSets;
  mailer: Mailer;
  /** Keys caches of secrets and tokens. */
  secret: string;
  /** Where people reach the system, for links (e-mails). */
  publicUrl: string;
  /** IANA time zone in which end dates and times of Casties are read. */
  timeZone: string;
  /** Check every response against its contract (tests). */
  checkResponses: boolean;
  /** What the service counts (dead letters, credential cache), labelled with its name. */
  metrics: ServiceMetrics;
  logger?: FastifyBaseLogger;
}

export interface BuiltService {
  app: FastifyInstance;
  /** The service's read models, when it has any: their lag decides readiness (/readyz). */
  readModels?: ProjectionRunner;
  /** Stops consumers and closes stores the service opened (the app is closed by the caller). */
  close(): Promise<void>;
}

/**
 * A service's read models as code: its consumer group, the catalogs of the topics it reads, and
 * its projections on a store. The service's `build` runs them; a first start of the embedded
 * profile may build them in a worker thread before (system/src/rebuild), from the same definition.
 */
export interface ReadModelsOfService {
  group: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  catalogs: readonly EventCatalog<any>[];
  /** `sortedSets`: where leaderboards live (Redis); without them, beside the read models in `store`. */
  projections(store: DocumentStore, sortedSets?: SortedSets): Projection[];
}

/**
 * A service as the system composes it. `build` returns once the service's read models have
 * replayed the log up to its end at start, so it never answers from a half-built read model.
 */
export interface ServiceModule {
  name: ServiceName;
  /** The read models `build` starts, if the service has any. */
  readModels?: ReadModelsOfService;
  /** The topics whose event stores `build` asks for (a profile may open them earlier: the embedded one indexes their streams while threads build read models). */
  eventStores: readonly string[];
  build(deps: ServiceDeps): Promise<BuiltService>;
}
