import { buildGatewayApp, httpClient, type ServiceClient } from '@castie/gateway';
import type { ServiceName } from '@castie/contracts';
import { loggerOptions, measuredEventLog, systemClock, type EventStore } from '@castie/platform';
import { createKafkaEventLog } from '@castie/platform/kafka/kafka-event-log';
import { createSmtpMailer } from '@castie/platform/mail/smtp-mailer';
import { createGridFsMediaStore } from '@castie/platform/mongo/gridfs-media-store';
import { connectMongo, createMongoDocumentStore } from '@castie/platform/mongo/mongo-document-store';
import { createMongoEventStore, REPUBLISHED_WITHIN } from '@castie/platform/mongo/mongo-event-store';
import { createRedisCache } from '@castie/platform/redis/redis-cache';
import pino from 'pino';
import { readClusterConfig, type ClusterConfig } from './cluster-config.ts';
import { liveLimitsOf } from './config.ts';
import { runProcess } from './lifecycle.ts';
import { processOperations } from './operations.ts';
import { allServices } from './services.ts';

/*
 * The cluster profile's entry point: one process per service, plus the gateway, each started as
 * `node packages/system/dist/cluster.js <service|gateway>` (built by `npm run build`). Config comes from the
 * environment only (see cluster-config.ts); adapters: Kafka log, MongoDB event store and read
 * models (databases per service), GridFS media, Redis cache, SMTP mail.
 */
const modules = allServices();
let logger: pino.Logger;

await runProcess({
  configure: () => readClusterConfig(process.argv[2], process.env, modules.map((m) => m.name)),
  logger: (config) => (logger = pino(loggerOptions({ level: config.LOG_LEVEL })).child({ role: config.role })),
  graceMs: (config) => config.SHUTDOWN_GRACE_MS,
  port: (config) => config.PORT,
  async start(config) {
    const started = Date.now();
    const running = config.role === 'gateway' ? await startGateway(config) : await startService(config, config.role);
    try {
      await running.listen();
    } catch (error) {
      await running.close();
      throw error;
    }
    logger.info({ port: config.PORT, ms: Date.now() - started }, `castie ${config.role} is listening on port ${config.PORT}`);
    return running;
  },
});

interface Running {
  listen(): Promise<void>;
  close(): Promise<void>;
}

/** Shared by every role: media on GridFS and the cache on Redis (both shared with the other processes). */
function sharedAdapters(c: ClusterConfig) {
  const mongo = connectMongo(c.MONGO_URL);
  const media = createGridFsMediaStore({ client: mongo, database: `${c.MONGO_DB_PREFIX}media` });
  const cache = createRedisCache({ url: c.REDIS_URL, keyPrefix: 'castie:', onError: (err) => logger.warn({ err }, 'redis connection problem') });
  return { mongo, media, cache };
}

async function startService(c: ClusterConfig, name: ServiceName): Promise<Running> {
  const module = modules.find((m) => m.name === name);
  if (!module) throw new Error(`the system has no service ${name}`);
  const { mongo, media, cache } = sharedAdapters(c);
  const warn = (message: string): void => logger.warn(message);
  const operations = processOperations({ maxLagEvents: c.READY_MAX_LAG_EVENTS });
  const kafkaLog = createKafkaEventLog({
    brokers: c.KAFKA_BROKERS,
    clientId: c.kafkaClientId,
    partitions: c.KAFKA_PARTITIONS,
    ...(c.KAFKA_REPLICATION_FACTOR ? { replicationFactor: c.KAFKA_REPLICATION_FACTOR } : {}),
    onWarning: warn,
  });
  // The outbox relay appends through it too: what is timed is the append to Kafka. A relay may
  // publish a batch again (mongo-event-store.ts): the projection runners skip the copies.
  const log = measuredEventLog(Object.assign(kafkaLog, { republishedWithin: REPUBLISHED_WITHIN }), operations.metrics);
  // Events and read models live in separate databases: rebuilding read models drops theirs.
  const writeDb = mongo.db(`${c.MONGO_DB_PREFIX}${name}`);
  const documents = createMongoDocumentStore({ client: mongo, database: `${c.MONGO_DB_PREFIX}${name}_read` });
  const mailer = c.SMTP_URL
    ? createSmtpMailer({ url: c.SMTP_URL, from: c.mailFrom })
    : {
        // Only the identity service sends mail, and it cannot start without SMTP_URL.
        send: async () => Promise.reject(new Error(`the ${name} service has no SMTP_URL`)),
        close: async () => {},
      };
  const stores = new Map<string, Promise<EventStore>>();
  const eventStore = (topic: string): Promise<EventStore> =>
    stores.get(topic) ?? stores.set(topic, createMongoEventStore({ db: writeDb, topic, log, onWarning: warn })).get(topic)!;

  const built = await module.build({
    log,
    eventStore,
    documents,
    clock: systemClock,
    media,
    cache,
    sortedSets: cache,
    mailer,
    secret: c.SECRET,
    publicUrl: c.PUBLIC_URL,
    timeZone: c.TZ_NAME,
    checkResponses: false,
    metrics: operations.metrics.forService(name),
    logger,
  });
  operations.installService(name, built);
  return {
    listen: async () => void (await built.app.listen({ port: c.PORT, host: c.HOST })),
    async close() {
      await built.app.close();
      await built.close();
      for (const store of stores.values()) await (await store).close();
      await log.close();
      await documents.close();
      await mailer.close();
      await cache.close();
      await media.close();
      await mongo.close();
    },
  };
}

async function startGateway(c: ClusterConfig): Promise<Running> {
  const { mongo, media, cache } = sharedAdapters(c);
  const operations = processOperations({ maxLagEvents: c.READY_MAX_LAG_EVENTS });
  const services: Partial<Record<ServiceName, ServiceClient>> = {};
  for (const [name, url] of Object.entries(c.serviceUrls) as [ServiceName, string][]) services[name] = httpClient(url);
  const gateway = await buildGatewayApp({
    services,
    media,
    cache,
    adminToken: c.ADMIN_TOKEN,
    apiKeys: c.API_KEYS,
    manualClock: null,
    logger,
    abuseLimits: { requestsPerUserPerMinute: c.USER_REQUESTS_PER_MINUTE },
    ...(c.TRUST_PROXY ? { trustProxy: c.TRUST_PROXY } : {}),
    corsOrigins: c.CORS_ORIGINS,
    liveLimits: liveLimitsOf(c),
    credentialCache: operations.metrics.forService('gateway'),
  });
  operations.installGateway(gateway, cache);
  return {
    listen: async () => void (await gateway.listen({ port: c.PORT, host: c.HOST })),
    async close() {
      await gateway.close();
      await cache.close();
      await media.close();
      await mongo.close();
    },
  };
}
