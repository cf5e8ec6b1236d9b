import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Compressed answers (brotli or gzip) for clients that ask with Accept-Encoding, through
 * @fastify/compress: JSON, HTML and other text of 1 KiB or more; smaller answers and images
 * (already compressed) go as they are. Brotli at quality 4: most of its gain at a fraction of the
 * CPU of the maximum. Request bodies are not decompressed: clients send forms, JSON and uploads
 * as they are, and a compressed body would only be a way around the body size limits.
 */
export const compression = fp(
  async (app: FastifyInstance) => {
    // Runs before the plugin's own onRoute hook (registered below), which reads this.
    app.addHook('onRoute', (route) => {
      route.decompress ??= false;
    });
    await app.register(compress, { global: true, encodings: ['br', 'gzip'], threshold: 1024 });
  },
  { name: 'castie-compression' },
);
