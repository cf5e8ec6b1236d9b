import type { Health } from '@castie/contracts';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.ts';
import type { ReadinessProbe } from './readiness.ts';

export interface OperationsDeps {
  /** Label of this app's requests in `castie_http_request_duration_seconds` (`gateway`, `groups`…). */
  service: string;
  metrics: Metrics;
  readiness: ReadinessProbe;
}

const HEALTH: Health = { status: 'ok' };

/**
 * The paths probes and Prometheus ask. Whatever else an app refuses for a while (a rebuild's 503),
 * these keep answering: a liveness probe that failed during a rebuild would get the pod killed.
 */
export const OPERATIONS_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * What probes and Prometheus read, on any app of the system: GET (and HEAD) /healthz, /readyz and
 * /metrics, plus the timing of every request of the app. These routes are outside /api/, so
 * neither the Api-Key check nor the user rate limit (both inside the gateway's /api/ routes)
 * applies. They log only warnings: a probe every few seconds would drown the request log.
 */
export function installOperations(app: FastifyInstance, deps: OperationsDeps): void {
  const { service, metrics, readiness } = deps;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest({ service, method: request.method, route: request.routeOptions.url, statusCode: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });

  const operations = { exposeHeadRoute: true, logLevel: 'warn' } as const;
  // Alive: answers as long as the event loop does; asks nothing of the adapters.
  app.get('/healthz', operations, async () => HEALTH);
  app.get('/readyz', operations, async (_request, reply) => {
    const report = await readiness.report();
    return reply.code(report.status === 'ready' ? 200 : 503).send(report);
  });
  app.get('/metrics', operations, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
}
