import { errorBody, type MediaStore } from '@castie/platform';
import type { FastifyInstance } from 'fastify';

/** Serves stored pictures at /media/<key>; keys are unique per upload, so they never change. */
export function mediaRoutes(app: FastifyInstance, media: MediaStore): void {
  app.route({
    // HEAD as GET (a client or cache checking a picture).
    method: ['GET', 'HEAD'],
    url: '/media/*',
    // PNG, JPEG and GIF are compressed already: compressing them again only costs CPU.
    compress: false,
    handler: async (request, reply) => {
      const key = (request.params as { '*': string })['*'];
      const object = /^[A-Za-z0-9/_.-]+$/.test(key) && !key.includes('..') ? await media.get(key) : null;
      if (!object) return reply.code(404).send(errorBody('not_found', 'no such picture'));
      reply.header('content-type', object.contentType).header('content-length', object.size).header('cache-control', 'public, max-age=31536000, immutable');
      return reply.send(object.body);
    },
  });
}
