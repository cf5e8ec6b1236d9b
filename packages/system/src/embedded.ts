import { buildGatewayApp, inProcessClient } from '@castie/gateway';
import { argon2idHasher, buildIdentityApp, type PasswordHasher } from '@castie/identity';
import { IDENTITY_LOGINS_TOPIC, IDENTITY_TOPIC } from '@castie/contracts';
import { ManualClock, systemClock, type Cache, type Clock } from '@castie/platform';
import { createFileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import { createMemoryCache } from '@castie/platform/embedded/memory-cache';
import { createOutboxMailer } from '@castie/platform/embedded/outbox-mailer';
import { createRedisCache } from '@castie/platform/redis/redis-cache';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmbeddedConfig } from './config.ts';

export interface EmbeddedSystem {
  gateway: FastifyInstance;
  clock: Clock;
  manualClock: ManualClock | null;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  logger?: FastifyBaseLogger;
  /** Tests pass a cheaper hasher; production uses argon2id defaults. */
  passwords?: PasswordHasher;
  /** Tests pass a fixed clock. */
  clock?: ManualClock;
}

/**
 * The embedded profile: the gateway and every service in one process, on the embedded adapters,
 * with all data under `dataDir`. Services are still reached through their HTTP contract (inject),
 * exactly as the cluster's gateway reaches them over the network. At start the log is replayed
 * into every read model.
 */
export async function startEmbedded(config: EmbeddedConfig, options: EmbeddedOptions = {}): Promise<EmbeddedSystem> {
  const logger = options.logger;
  await mkdir(config.dataDir, { recursive: true });
  const log = await createFileEventLog({ dir: join(config.dataDir, 'log'), onWarning: (message) => logger?.warn(message) });
  const manualClock = options.clock ?? (config.CLOCK === 'manual' ? new ManualClock() : null);
  const clock: Clock = manualClock ?? systemClock;
  const media = createLocalMediaStore({ dir: join(config.dataDir, 'media') });
  const mailer = createOutboxMailer({ dir: join(config.dataDir, 'outbox'), onSent: (info) => logger?.info({ mail: info }, 'mail written to the outbox') });
  const cache: Cache = config.REDIS_URL ? createRedisCache({ url: config.REDIS_URL, keyPrefix: 'castie:' }) : createMemoryCache();

  const identity = await buildIdentityApp({
    accounts: await createLogEventStore({ log, topic: IDENTITY_TOPIC }),
    logins: await createLogEventStore({ log, topic: IDENTITY_LOGINS_TOPIC }),
    clock,
    mailer,
    passwords: options.passwords ?? argon2idHasher(),
    secret: config.secret,
    publicUrl: config.publicUrl,
    ...(logger ? { logger: logger.child({ service: 'identity' }) } : {}),
  });
  await identity.ready();

  const gateway = await buildGatewayApp({
    services: { identity: inProcessClient(identity) },
    media,
    cache,
    adminToken: config.adminToken,
    apiKeys: config.API_KEYS,
    manualClock,
    ...(logger ? { logger } : {}),
  });

  return {
    gateway,
    clock,
    manualClock,
    async close() {
      await gateway.close();
      await identity.close();
      await cache.close();
      await mailer.close();
      await media.close();
      await log.close();
    },
  };
}
