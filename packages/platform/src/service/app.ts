import { internalHeaders } from '@castie/contracts';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { OneLinePerRequest, requestIdOf, requestLogger } from './logging.ts';
import { clientErrors, errorBody, frameworkErrors, installErrorHandler, installJsonParser, refuseDotSegments } from './errors.ts';
import { parsePositions } from './positions.ts';
import type { ReadModels } from './projections.ts';

export interface ServiceAppOptions {
  name: string;
  logger?: FastifyBaseLogger | boolean;
  /** Read models of this service; requests carrying `x-castie-after` wait for them (bounded). */
  readModels?: Pick<ReadModels, 'waitFor'>;
  /** How long a request waits for its read models before answering anyway. */
  sessionWaitMs?: number;
}

/**
 * The Fastify instance every service is built on: trailing slashes optional, JSON bodies, the
 * one error handler, unknown routes as not_found, and session consistency (rule 6): a request
 * that names log positions waits until this service's read models have applied them (those of
 * the topics its route reads: RouteOptions.sessionTopics).
 */
export function createServiceApp(options: ServiceAppOptions): FastifyInstance {
  const app = Fastify({
    ...(typeof options.logger === 'object' ? { loggerInstance: options.logger } : { logger: options.logger ?? false }),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    bodyLimit: 1024 * 1024,
    frameworkErrors,
    clientErrorHandler: clientErrors,
    // The gateway passes its request id, so one user request reads as one id across services.
    genReqId: requestIdOf,
    logController: new OneLinePerRequest(),
    childLoggerFactory: requestLogger,
  }) as unknown as FastifyInstance;
  installErrorHandler(app);
  installJsonParser(app);
  refuseDotSegments(app);
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody('not_found', `no such endpoint: ${request.method} ${request.url.split('?')[0]}`)));

  const gate = options.readModels;
  if (gate) {
    const timeout = options.sessionWaitMs ?? 3000;
    // A callback hook: most requests carry no positions, or ones already applied, and go on
    // without a promise of their own.
    app.addHook('preHandler', (request, _reply, done) => {
      const after = request.headers[internalHeaders.after];
      if (after === undefined) return done();
      const only = request.routeOptions.config.sessionTopics;
      const positions = parsePositions(after).filter((p) => !only || only.includes(p.topic));
      if (positions.length === 0) return done();
      gate.waitFor(positions, timeout).then(
        (reached) => {
          if (!reached) request.log.warn({ positions }, 'read models lag behind the session; answering anyway');
          done();
        },
        (error: unknown) => done(error instanceof Error ? error : new Error(`waiting for the read models failed: ${String(error)}`)),
      );
    });
  }
  return app;
}
