import { cacheAnswers, installOperations, Metrics, ReadinessProbe, ReadModelWatch, type BuiltService, type Cache } from '@castie/platform';
import type { FastifyInstance } from 'fastify';

/**
 * Health, readiness and metrics of one process, whichever profile: one metrics registry for the
 * process (labels carry the service), and /healthz, /readyz, /metrics on every app it hosts.
 *
 * Readiness: a service answers for its own read models (at most `maxLagEvents` records behind
 * the log). The gateway answers for what it cannot serve without: its cache (the abuse limits and
 * the sessions' positions live there), and, in the embedded process, the read models of every
 * service it hosts. A cluster gateway does not ask the services: each has its own probe, and a
 * gateway taken out for one slow service would refuse the requests the others can answer.
 */
export function processOperations(options: { maxLagEvents: number }) {
  const hosted = new ReadModelWatch();
  const metrics = new Metrics({ readModelLag: () => hosted.lag() });
  const { maxLagEvents } = options;
  return {
    metrics,
    /** Before the service's app is ready: its own /readyz covers its read models. */
    installService(name: string, built: BuiltService): void {
      const own = new ReadModelWatch();
      if (built.readModels) {
        own.watch(name, built.readModels);
        hosted.watch(name, built.readModels);
      }
      installOperations(built.app, { service: name, metrics, readiness: new ReadinessProbe({ readModels: own, maxLagEvents }) });
    },
    /** Before the gateway is ready: its /readyz covers its cache and every service of the process. */
    installGateway(gateway: FastifyInstance, cache: Pick<Cache, 'get'>): void {
      installOperations(gateway, { service: 'gateway', metrics, readiness: new ReadinessProbe({ readModels: hosted, maxLagEvents, checks: [cacheAnswers(cache)] }) });
    },
  };
}
