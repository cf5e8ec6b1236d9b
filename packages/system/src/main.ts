import closeWithGrace from 'close-with-grace';
import { loggerOptions } from '@castie/platform';
import pino from 'pino';
import { readEmbeddedConfig } from './config.ts';
import { startEmbedded } from './embedded.ts';

// The embedded profile's entry point (`npm start`): read config once, start, listen, close cleanly.
const config = readEmbeddedConfig(process.env);
const logger = pino(loggerOptions({ level: config.LOG_LEVEL }));
const started = Date.now();
const system = await startEmbedded(config, { logger });
await system.gateway.listen({ port: config.PORT, host: config.HOST });
logger.info({ port: config.PORT, dataDir: config.dataDir, clock: config.CLOCK, ms: Date.now() - started }, `Castie is listening on http://localhost:${config.PORT}/api/`);
if (config.adminTokenGenerated) logger.info({ adminToken: config.adminToken }, 'ADMIN_TOKEN was not set: use this generated token for /admin/ (Authorization: Bearer <token>)');

closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an error');
  else logger.info({ signal }, 'closing');
  await system.close();
});
