import { readModelsAdminApi, type ReadModelService } from '@castie/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogPosition } from '../ports/event-log.ts';
import { OPERATIONS_PATHS } from '../observability/routes.ts';
import { adminRoutesOnlyFromGateway, isAdminRoute } from './admin-access.ts';
import { errorBody } from './errors.ts';
import { startProjections, type ProjectionRunner, type ProjectionRunnerOptions, type ProjectionsHost } from './projections.ts';
import { route, type RouteOptions } from './route.ts';

/** Waits for the runner to catch up; one that cannot (it broke) is stopped, not left retrying. */
async function caughtUpOrStopped(runner: ProjectionRunner): Promise<void> {
  try {
    await runner.caughtUp();
  } catch (error) {
    await runner.stop().catch(() => undefined);
    throw error;
  }
}

/** How the service's read models run: where they go on once caught up at start (default: here). */
export interface ManagedReadModelsOptions extends ProjectionRunnerOptions {
  host?: ProjectionsHost;
}

/**
 * Starts the projections, waits for them to catch up (a rebuild at start runs here), then hands
 * them over to the host, if any.
 */
async function runProjections(options: ManagedReadModelsOptions, rebuildAll = false): Promise<ProjectionRunner> {
  const runner = await startProjections(rebuildAll ? { ...options, rebuildAll } : options);
  await caughtUpOrStopped(runner);
  if (!options.host) return runner;
  try {
    const hosted = await options.host.takeOver(runner, options);
    await caughtUpOrStopped(hosted);
    return hosted;
  } catch (error) {
    // takeOver stopped the runner at its checkpoints, and left none running: one here goes on from them.
    options.logger?.warn({ group: options.group, err: error }, `${options.group}: its projections could not move to their thread; they run on the event loop`);
    const here = await startProjections(options);
    await caughtUpOrStopped(here);
    return here;
  }
}

/** How long a rebuild waits for requests in flight to finish before it drops their read models. */
const DRAIN_MS = 5000;

/**
 * A service's read models that operators can rebuild while the process runs.
 *
 * How a rebuild works, and why: it is the rebuild the runner already does at start when a
 * projection's version changed (drop the collections, bulk-load from the start of the log, build
 * the indexes once), done in place on the service's own store. While it runs the service does not
 * answer from the half-built read models: new requests get 503 `service_unavailable` with
 * `Retry-After` (readiness is false: `ready` below), requests already in flight finish first, and
 * anything waiting for the read models (session consistency, admin writes, policies) waits for the
 * rebuild to end. Building into a second store and swapping would keep the service answering, but
 * every feature holds handles on its store and caches keyed by it, and the store's identity (a
 * SQLite file, a MongoDB database) is fixed at start; rebuilding is fast (rule 7), so a short,
 * honest 503 is the simpler contract. The rebuild is online: no restart, the other services go on.
 */
export class ManagedReadModels implements ProjectionRunner {
  #runner: ProjectionRunner;
  #rebuilding: Promise<{ events: number; seconds: number }> | null = null;
  /** Set when a rebuild failed: the read models are in an unknown state until the next start. */
  #failed: Error | null = null;
  /** Requests being answered from the read models right now (drained before a rebuild drops them). */
  #inFlight = 0;
  #drained: (() => void) | null = null;

  private constructor(
    private readonly options: ManagedReadModelsOptions,
    runner: ProjectionRunner,
  ) {
    this.#runner = runner;
  }

  /** Starts the projections and resolves once they applied what the log held at start. */
  static async start(options: ManagedReadModelsOptions): Promise<ManagedReadModels> {
    return new ManagedReadModels(options, await runProjections(options));
  }

  get group(): string {
    return this.options.group;
  }

  /** False while a rebuild runs (or after one failed). */
  get ready(): boolean {
    return this.#rebuilding === null && this.#failed === null;
  }

  /** Waits for a running rebuild first: positions are only meaningful in finished read models. */
  async waitFor(positions: readonly LogPosition[], timeoutMs?: number): Promise<boolean> {
    await this.#rebuilding?.catch(() => undefined);
    return this.#runner.waitFor(positions, timeoutMs);
  }

  async catchUp(topics: readonly string[], timeoutMs?: number): Promise<boolean> {
    await this.#rebuilding?.catch(() => undefined);
    return this.#runner.catchUp(topics, timeoutMs);
  }

  caughtUp(): Promise<void> {
    return this.#runner.caughtUp();
  }

  /** Waits for a running rebuild first: the runner that stopped for it may not answer (one in a thread does not). */
  async deadLetters(options?: { all?: boolean }) {
    await this.#rebuilding?.catch(() => undefined);
    return this.#runner.deadLetters(options);
  }

  async replay(id: string) {
    await this.#rebuilding?.catch(() => undefined);
    return this.#runner.replay(id);
  }

  applied(): number {
    return this.#runner.applied();
  }

  /** While a rebuild runs (or after one failed) the lag is not a number worth reporting: readiness says not ready. */
  lag() {
    if (!this.ready) return Promise.reject(new Error(this.#failed ? `${this.group}: the rebuild failed; restart the service` : `${this.group}: rebuilding its read models`));
    return this.#runner.lag();
  }

  pause(): Promise<void> {
    return this.#runner.pause();
  }

  resume(): void {
    this.#runner.resume();
  }

  async stop(): Promise<void> {
    await this.#rebuilding?.catch(() => undefined);
    await this.#runner.stop();
  }

  /** Rebuilds every projection from the log; a second call while one runs joins it. */
  rebuild(): Promise<{ events: number; seconds: number }> {
    if (this.#failed) return Promise.reject(this.#failed);
    this.#rebuilding ??= this.#rebuild()
      .catch((error: unknown) => {
        this.#failed = error instanceof Error ? error : new Error(String(error));
        this.options.logger?.error({ group: this.group, err: error }, 'the rebuild of the read models failed: the service answers 503 until it is restarted');
        throw error;
      })
      .finally(() => {
        this.#rebuilding = null;
      });
    return this.#rebuilding;
  }

  async #rebuild(): Promise<{ events: number; seconds: number }> {
    const started = Date.now();
    if (this.#inFlight > 0) {
      // Bounded: a long-lived request (a notification stream) must not hold the rebuild forever.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => (this.#drained = resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
      clearTimeout(timer);
      this.#drained = null;
    }
    this.options.logger?.info({ group: this.group }, 'operator rebuild of the read models: the service answers 503 until it is done');
    await this.#runner.stop();
    // If starting over fails (the store or the log is gone), the error reaches the operator and the
    // service keeps answering 503: serving read models in an unknown state would be worse.
    this.#runner = await runProjections(this.options, true);
    return { events: this.#runner.applied(), seconds: (Date.now() - started) / 1000 };
  }

  #enter(): void {
    this.#inFlight += 1;
  }

  #leave(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0 && this.#drained) {
      this.#drained();
      this.#drained = null;
    }
  }

  /**
   * On the service's app: the 503 gate while a rebuild runs, and the admin endpoints
   * (`readModelsAdminApi`) of this service, reachable only with the gateway's admin header.
   */
  install(app: FastifyInstance, service: ReadModelService, routeOptions: RouteOptions = {}): void {
    adminRoutesOnlyFromGateway(app);
    // Whether a request was counted in flight: a request decoration (a WeakSet's add and delete
    // were about 1 % of a feed page through the gateway).
    const counted = Symbol('castie.countedInFlight');
    app.decorateRequest(counted, false);
    type Counted = FastifyRequest & { [counted]: boolean };
    // Callback hooks: they run on every request, and none of them waits for anything.
    app.addHook('onRequest', (request, reply, done) => {
      // Its own admin routes are answered even while rebuilding (guarded by adminRoutesOnlyFromGateway).
      if (isAdminRoute(request)) return done();
      // Probes and scrapes answer for themselves: /readyz says "rebuilding", /healthz stays alive.
      if (request.routeOptions.url !== undefined && OPERATIONS_PATHS.has(request.routeOptions.url)) return done();
      if (!this.ready) {
        reply
          .code(503)
          .header('retry-after', '1')
          .send(
            errorBody(
              'service_unavailable',
              this.#failed ? `the ${service} service could not rebuild its read models and must be restarted` : `the ${service} service is rebuilding its read models; try again in a moment`,
            ),
          );
        return;
      }
      (request as Counted)[counted] = true;
      this.#enter();
      done();
    });
    const leave = (request: FastifyRequest) => {
      if (!(request as Counted)[counted]) return;
      (request as Counted)[counted] = false;
      this.#leave();
    };
    app.addHook('onResponse', (request, _reply, done) => {
      leave(request);
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      leave(request);
      done();
    });

    const endpoints = readModelsAdminApi(service);
    const state = () => ({
      service,
      group: this.group,
      state: this.ready ? ('ready' as const) : ('rebuilding' as const),
      projections: this.options.projections.map((p) => ({ name: p.name, version: p.version })),
    });
    route(app, endpoints.state, async () => state(), routeOptions);
    route(
      app,
      endpoints.rebuild,
      async () => {
        const { events, seconds } = await this.rebuild();
        return { ...state(), events, seconds, message: `the ${service} read models were rebuilt from ${events} events in ${seconds.toFixed(1)} s` };
      },
      routeOptions,
    );
    route(
      app,
      endpoints.deadLetters,
      async ({ query }) => {
        const letters = await this.deadLetters({ all: query.all === 'true' });
        return { service, number_dead_letters: letters.length, dead_letters: letters };
      },
      routeOptions,
    );
    route(
      app,
      endpoints.replay,
      async ({ params }) => {
        const letter = await this.replay(params.id);
        return { dead_letter: letter, message: `the event ${letter.id} was applied again by ${letter.projections.length > 0 ? letter.projections.join(', ') : 'every projection of its topic'}` };
      },
      routeOptions,
    );
  }
}
