import { loggerOptions } from '@castie/platform';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { readEmbeddedConfig } from './config.ts';
import { startEmbedded } from './embedded.ts';
import { runProcess } from './lifecycle.ts';

// The embedded profile's entry point (`npm start`, or `node packages/system/dist/main.js` once
// built): read config once, start, listen; SIGTERM/SIGINT drain and flush within SHUTDOWN_GRACE_MS.
await runProcess({
  configure: () => readEmbeddedConfig(process.env),
  logger: (config) => pino(loggerOptions({ level: config.LOG_LEVEL })),
  graceMs: (config) => config.SHUTDOWN_GRACE_MS,
  port: (config) => config.PORT,
  async start(config, logger) {
    const started = Date.now();
    const system = await startEmbedded(config, { logger });
    try {
      await system.gateway.listen({ port: config.PORT, host: config.HOST });
    } catch (error) {
      await system.close();
      throw error;
    }
    const { port } = system.gateway.server.address() as AddressInfo;
    logger.info({ port, dataDir: config.dataDir, clock: config.CLOCK, ms: Date.now() - started }, `Castie is listening on http://localhost:${port}/api/`);
    if (config.adminTokenGenerated) logger.info({ adminToken: config.adminToken }, 'ADMIN_TOKEN was not set: use this generated token for /admin/ (Authorization: Bearer <token>)');
    return system;
  },
});
