import { buildGatewayApp, inProcessClient, type ServiceClient } from '@castie/gateway';
import type { PasswordHasher } from '@castie/identity';
import type { ServiceName } from '@castie/contracts';
import { ManualClock, measuredEventLog, systemClock, type BuiltService, type Cache, type Clock, type DocumentStore, type EventLog, type EventStore, type Metrics } from '@castie/platform';
import { createFileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import { createMemoryCache } from '@castie/platform/embedded/memory-cache';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { backgroundCheckpoints } from '@castie/platform/sqlite/background-checkpoints';
import { SqliteReadModelCopies } from '@castie/platform/sqlite/read-model-copies';
import { createOutboxMailer } from '@castie/platform/embedded/outbox-mailer';
import { createRedisCache } from '@castie/platform/redis/redis-cache';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { liveLimitsOf, type EmbeddedConfig } from './config.ts';
import { processOperations } from './operations.ts';
import { FULL_SPEED_BUDGET, memoryBudget, rebuildSizing } from './rebuild/sizing.ts';
import { buildNewReadModelsInWorkers, removeUnfinishedReadModels, type ParallelRebuildOptions } from './rebuild/parallel.ts';
import { allServices } from './services.ts';
import { ProjectionsThread } from './projections-thread/host.ts';

export interface EmbeddedSystem {
  gateway: FastifyInstance;
  /** The cache the gateway and the services share (benchmarks build a second gateway on it). */
  cache: Cache;
  /** The event log (tests and tools read how far each topic is). */
  log: EventLog;
  clock: Clock;
  manualClock: ManualClock | null;
  services: Map<ServiceName, BuiltService>;
  /** How the gateway reaches each service (benchmarks measure the gateway's own cost with them). */
  clients: Partial<Record<ServiceName, ServiceClient>>;
  /** The thread the services' projections run in once caught up (null: on the event loop). */
  projectionsThread: ProjectionsThread | null;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  logger?: FastifyBaseLogger;
  /** Tests pass a cheaper hasher; production uses argon2id defaults. */
  passwords?: PasswordHasher;
  /** Tests pass a fixed clock. */
  clock?: ManualClock;
  /** Check every service response against its contract (tests). */
  checkResponses?: boolean;
  /** Tests wrap a service's read-model store, e.g. to make a projection fail (dead letters). */
  wrapDocuments?: (service: ServiceName, store: DocumentStore) => DocumentStore;
  /** New read-model files built in worker threads at start (rebuild/parallel.ts); `{ workers: 0 }` turns it off. */
  parallelRebuild?: ParallelRebuildOptions;
  /** Run the services' projections in a thread of their own once caught up (default true; projections-thread/host.ts). */
  projectionsThread?: boolean;
}

/**
 * The embedded profile's event log (`<dataDir>/log`) and its event stores: one per topic, shared by
 * whoever asks (only the owning service writes it). `close` closes the stores, then the log.
 * Also used by tools that write history straight through the write side (`npm run seed`).
 * With `metrics`, every append (the event stores' too) is timed; `onProgress` is told how long
 * building a missing stream index took.
 */
export async function openEmbeddedEventStores(
  dataDir: string,
  options: { onWarning?: (message: string) => void; onProgress?: (message: string) => void; metrics?: Metrics } = {},
): Promise<{ log: EventLog; eventStore(topic: string): Promise<EventStore>; close(): Promise<void> }> {
  const { onWarning, onProgress, metrics } = options;
  const fileLog = await createFileEventLog({ dir: join(dataDir, 'log'), ...(onWarning ? { onWarning } : {}) });
  const log = metrics ? measuredEventLog(fileLog, metrics) : fileLog;
  const stores = new Map<string, Promise<EventStore>>();
  const eventStore = (topic: string) => stores.get(topic) ?? stores.set(topic, createLogEventStore({ log, topic, ...(onProgress ? { onProgress } : {}) })).get(topic)!;
  return {
    log,
    eventStore,
    async close() {
      for (const store of stores.values()) await (await store).close();
      await log.close();
    },
  };
}

/**
 * The embedded profile: the gateway and every service in one process, on the embedded adapters,
 * with all data under `dataDir`. Services are still reached through their HTTP contract (inject),
 * exactly as the cluster's gateway reaches them over the network. Each service keeps its read
 * models in its own SQLite file under `<dataDir>/read-models/`, resumed at start (rebuilt from the
 * log when missing or when a projection's version changed).
 */
export async function startEmbedded(config: EmbeddedConfig, options: EmbeddedOptions = {}): Promise<EmbeddedSystem> {
  const logger = options.logger;
  await mkdir(config.dataDir, { recursive: true });
  // One registry and one readiness for the whole process: the gateway's /readyz covers every service.
  const operations = processOperations({ maxLagEvents: config.READY_MAX_LAG_EVENTS });
  const checkpointFailures = backgroundCheckpoints.onFailure(({ path, error }) => {
    operations.metrics.checkpointFailed(path ? basename(path) : 'thread');
    logger?.warn({ path, error }, 'SQLite WAL checkpoints in the background failed; those files checkpoint in their commits past 16 MB of WAL');
  });
  const { log, eventStore, close: closeEvents } = await openEmbeddedEventStores(config.dataDir, { onWarning: (message) => logger?.warn(message), onProgress: (message) => logger?.info(message), metrics: operations.metrics });
  const clock: Clock = options.clock ?? (config.CLOCK === 'manual' ? new ManualClock() : systemClock);
  // Only CLOCK=manual lets operators move time; a test's fixed clock alone does not.
  const manualClock = config.CLOCK === 'manual' && clock instanceof ManualClock ? clock : null;
  const media = createLocalMediaStore({ dir: join(config.dataDir, 'media') });
  const mailer = createOutboxMailer({ dir: join(config.dataDir, 'outbox'), onSent: (info: unknown) => logger?.info({ mail: info }, 'mail written to the outbox') });
  // With REDIS_URL the leaderboards' sorted sets live in Redis too; else beside each service's read models.
  const redis = config.REDIS_URL ? createRedisCache({ url: config.REDIS_URL, keyPrefix: 'castie:' }) : null;
  const cache: Cache = redis ?? createMemoryCache();

  // Not with Redis (the leaderboards' sorted sets live there, and the thread has no client) nor
  // with wrapped stores (tests: the wrapper is an object of this thread).
  const projectionsThread = !redis && !options.wrapDocuments && options.projectionsThread !== false ? new ProjectionsThread(logger) : null;
  const services = new Map<ServiceName, BuiltService>();
  const clients: Partial<Record<ServiceName, ServiceClient>> = {};
  // Each service's read models in its own SQLite file: kept across restarts, rebuilt when missing.
  const readModelDir = join(config.dataDir, 'read-models');
  await mkdir(readModelDir, { recursive: true });
  const documents: DocumentStore[] = [];
  // The reference read models every service keeps (people, friendships, groups) are built from the
  // log once, by the first service that needs them; the services after it copy its tables.
  const copies = new SqliteReadModelCopies();
  const modules = allServices(options.passwords ? { passwords: options.passwords } : {});
  // What a rebuild may hold, and in how many threads, from the memory the process may use.
  const budget = memoryBudget();
  const sizing = rebuildSizing(budget, config.REBUILD_HELD_DOCUMENTS ? { heldDocuments: config.REBUILD_HELD_DOCUMENTS } : {});
  if (budget < FULL_SPEED_BUDGET) {
    logger?.info({ memoryMiB: Math.round(budget / 2 ** 20), ...sizing }, `${(budget / 2 ** 30).toFixed(1)} GiB of memory: read models are rebuilt in ${sizing.threads} thread${sizing.threads === 1 ? '' : 's'}, holding ${sizing.heldDocuments.toLocaleString('en-US')} documents between commits`);
  }
  removeUnfinishedReadModels(readModelDir, modules);
  // On a long history, new read-model files (and missing stream indexes of the event stores) are
  // built side by side in threads first. Not with Redis (the leaderboards live there, not in the files) nor with wrapped stores (tests).
  if (!redis && !options.wrapDocuments) {
    await buildNewReadModelsInWorkers({
      log,
      logDir: join(config.dataDir, 'log'),
      readModelDir,
      heldDocuments: sizing.threadHeldDocuments,
      bulkCacheMiB: sizing.bulkCacheMiB,
      modules,
      ...(logger ? { logger } : {}),
      parallel: { workers: sizing.threads, ...options.parallelRebuild },
    });
  }
  for (const module of modules) {
    const started = Date.now();
    const store = openSqliteDocumentStore({ path: join(readModelDir, `${module.name}.db`), deferredDocuments: sizing.heldDocuments, bulkCacheMiB: sizing.bulkCacheMiB });
    documents.push(store);
    const built = await module.build({
      log,
      eventStore,
      documents: options.wrapDocuments ? options.wrapDocuments(module.name, store) : store,
      readModelCopies: copies.for(store),
      ...(projectionsThread ? { projectionsHost: projectionsThread.for(store) } : {}),
      clock,
      media,
      cache,
      ...(redis ? { sortedSets: redis } : {}),
      mailer,
      secret: config.secret,
      publicUrl: config.publicUrl,
      timeZone: config.TZ_NAME,
      checkResponses: options.checkResponses ?? false,
      metrics: operations.metrics.forService(module.name),
      ...(logger ? { logger: logger.child({ service: module.name }) } : {}),
    });
    operations.installService(module.name, built);
    clients[module.name] = inProcessClient(built.app);
    await built.app.ready();
    services.set(module.name, built);
    logger?.info({ service: module.name, ms: Date.now() - started }, 'service ready');
  }

  const gateway = await buildGatewayApp({
    services: clients,
    media,
    cache,
    adminToken: config.adminToken,
    apiKeys: config.API_KEYS,
    manualClock,
    abuseLimits: { requestsPerUserPerMinute: config.USER_REQUESTS_PER_MINUTE },
    ...(config.TRUST_PROXY ? { trustProxy: config.TRUST_PROXY } : {}),
    corsOrigins: config.CORS_ORIGINS,
    liveLimits: liveLimitsOf(config),
    credentialCache: operations.metrics.forService('gateway'),
    ...(logger ? { logger } : {}),
  });
  operations.installGateway(gateway, cache);

  return {
    gateway,
    cache,
    log,
    clock,
    manualClock,
    services,
    clients,
    projectionsThread,
    async close() {
      await gateway.close();
      for (const service of [...services.values()].reverse()) {
        await service.close();
        await service.app.close();
      }
      await projectionsThread?.close();
      for (const store of documents) await store.close();
      await cache.close();
      await mailer.close();
      await media.close();
      await closeEvents();
      checkpointFailures();
    },
  };
}
