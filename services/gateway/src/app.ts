import { DomainError, internalHeaders, NotificationCountsSchema, notificationsLiveApi, OwnDataExportQuerySchema, type AuthenticatedUser, type ServiceName } from '@castie/contracts';
import { clientErrors, errorBody, type ServiceMetrics, frameworkErrors, installErrorHandler, installJsonParser, OneLinePerRequest, parsePositions, refuseDotSegments, requestIdOf, requestLogger, type Cache, type ManualClock, type MediaStore } from '@castie/platform';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import { Readable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AbuseGuard, defaultAbuseLimits, type AbuseLimits } from './abuse/limits.ts';
import { adminRoutes } from './admin/routes.ts';
import { Admission, type Admitted } from './credentials/admission.ts';
import { VerifiedCredentials } from './credentials/credentials.ts';
import { openApiDocument } from './docs/openapi.ts';
import { docsRoutes } from './docs/page.ts';
import { csvZip, ExportSlots, jsonDocument, readSmallSections, ServiceAnswered, type ExportSource } from './export/own-data.ts';
import { compression } from './http/compression.ts';
import { corsForOrigins } from './http/cors.ts';
import { requestIds, withRequestId } from './http/request-ids.ts';
import { defaultLiveLimits, LiveStreams, type LiveLimits } from './live/live-streams.ts';
import { StreamTokens } from './live/stream-tokens.ts';
import { mediaRoutes } from './media/routes.ts';
import { publicRoutes, type PublicRoute } from './routing/routes.ts';
import { bodyText, type ServiceClient } from './routing/service-client.ts';
import { SessionPositions } from './sessions/session-positions.ts';
import { readMultipart, withoutClientUploadRefs, type ReadBody } from './uploads/multipart.ts';

export interface GatewayDeps {
  services: Partial<Record<ServiceName, ServiceClient>>;
  media: MediaStore;
  cache: Cache;
  /** Bearer token of the admin API. */
  adminToken: string;
  /** When set, every /api/ request needs one of these in `Api-Key`. */
  apiKeys?: readonly string[];
  /** Present only with CLOCK=manual: POST /admin/clock/ moves it. */
  manualClock?: ManualClock | null;
  maxUploadBytes?: number;
  logger?: FastifyBaseLogger | boolean;
  /** Limits on repeated attempts (defaults: defaultAbuseLimits). */
  abuseLimits?: Partial<AbuseLimits>;
  /**
   * Whose X-Forwarded-For to believe for the client address (Fastify's trustProxy): false when
   * clients connect directly (default); behind a proxy, its addresses or CIDRs, comma-separated.
   */
  trustProxy?: boolean | string;
  /** Origins of browser clients allowed to call (CORS_ORIGINS); none: no cross-origin access. */
  corsOrigins?: readonly string[];
  /** Limits of live notification streams (defaults: defaultLiveLimits). */
  liveLimits?: Partial<LiveLimits>;
  /** Counts hits and misses of the gateway's verified credentials (metrics). */
  credentialCache?: Pick<ServiceMetrics, 'credentialCacheLookup'>;
  /**
   * Who a request is for. Default: `Admission` (the credentials, the abuse guard's locks and
   * budget, the session positions), which every deployment uses. The gateway benchmark wraps it
   * (a function given the standard admission) to admit requests without credentials as a fixed
   * user, and so measures what admission costs a request on one and the same gateway
   * (bench/support/gateway-front.ts).
   */
  admission?: Pick<Admission, 'admit'> | ((standard: Pick<Admission, 'admit'>) => Pick<Admission, 'admit'>);
}

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;

/**
 * The one public surface (rule 3): it authenticates, routes to the owning service, renders the
 * error envelope and stores uploads. It holds no domain rules: the routing table comes from the
 * contracts and every answer comes from a service.
 */
export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const maxUploadBytes = deps.maxUploadBytes ?? 5 * 1024 * 1024;
  const app = Fastify({
    ...(typeof deps.logger === 'object' ? { loggerInstance: deps.logger } : { logger: deps.logger ?? false }),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    exposeHeadRoutes: false,
    bodyLimit: 1024 * 1024,
    frameworkErrors: withRequestId(frameworkErrors),
    clientErrorHandler: clientErrors,
    // Trusting every X-Forwarded-For would let anyone pick the address that limits count.
    trustProxy: deps.trustProxy ?? false,
    // The client's x-request-id when acceptable, else a UUID; passed on to the services.
    genReqId: requestIdOf,
    logController: new OneLinePerRequest(),
    childLoggerFactory: requestLogger,
  }) as unknown as FastifyInstance;
  // Before any route: their hooks apply to every route, the error envelope and 404s alike.
  await app.register(requestIds);
  await app.register(corsForOrigins, { origins: deps.corsOrigins ?? [] });
  await app.register(compression);
  installErrorHandler(app);
  installJsonParser(app);
  refuseDotSegments(app);
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: maxUploadBytes, files: 4, fields: 100, fieldSize: 64 * 1024 } });
  const sessions = new SessionPositions(deps.cache);
  const credentials = new VerifiedCredentials(() => serviceOf('identity'), deps.cache, deps.credentialCache ? { observer: deps.credentialCache } : {});
  const guard = new AbuseGuard(deps.cache, { ...defaultAbuseLimits, ...deps.abuseLimits });
  const standard = new Admission(deps.cache, credentials, guard, sessions);
  const admission = typeof deps.admission === 'function' ? deps.admission(standard) : (deps.admission ?? standard);
  const apiKeys = new Set(deps.apiKeys ?? []);
  const liveLimits = { ...defaultLiveLimits, ...deps.liveLimits };
  const tokens = new StreamTokens(deps.cache, liveLimits.tokenSeconds);
  const live = new LiveStreams({ cache: deps.cache, counts: (user) => countsOf(user), limits: liveLimits, logger: app.log });
  await live.start();
  // Open streams end first: the server's close waits for every response, and a stream never ends by itself.
  app.addHook('preClose', async () => live.close());
  app.decorate('liveStreams', live);

  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody('not_found', `no such endpoint: ${request.method} ${request.url.split('?')[0]}`)));

  function serviceOf(name: ServiceName): ServiceClient {
    const client = deps.services[name];
    if (!client) throw new Error(`no client for service ${name}`);
    return client;
  }

  async function bodyOf(request: FastifyRequest, uploads: readonly string[]): Promise<ReadBody> {
    if (request.isMultipart()) return readMultipart(request, deps.media, uploads, maxUploadBytes);
    const body = request.method === 'GET' || request.method === 'HEAD' ? await readGetBody(request) : request.body;
    const fields = body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
    return { fields: withoutClientUploadRefs(fields, uploads), stored: [] };
  }

  /** The user the request's credentials open (see Admission); `username`/`password` fields leave `body`. */
  function authenticated(request: FastifyRequest, body: Record<string, unknown>): Promise<Admitted> {
    return admission.admit(request, body);
  }

  async function discard(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => deps.media.delete(key).catch(() => undefined)));
  }

  function requireApiKey(request: FastifyRequest): void {
    if (apiKeys.size === 0) return;
    const key = request.headers['api-key'];
    if (typeof key !== 'string' || !apiKeys.has(key)) throw new DomainError('authorization_failed', 'a valid Api-Key header is required');
  }

  /** Who the request is for, as the services read it, and the log positions they must have applied. */
  function userHeaders({ user, after }: Admitted): Record<string, string> {
    const headers: Record<string, string> = {
      [internalHeaders.userId]: user.userId,
      [internalHeaders.handle]: encodeURIComponent(user.handle),
      [internalHeaders.email]: encodeURIComponent(user.email),
    };
    if (after.length > 0) headers[internalHeaders.after] = after.map((p) => `${p.topic}:${p.partition}:${p.offset}`).join(',');
    return headers;
  }

  const exportSlots = new ExportSlots(deps.cache);

  /** GET /api/export/: the requester's own data (export/own-data.ts says how it is assembled). */
  async function ownDataExport(request: FastifyRequest, reply: FastifyReply) {
    requireApiKey(request);
    const { fields } = await bodyOf(request, []);
    const admitted = await authenticated(request, fields);
    const { user } = admitted;
    const query = OwnDataExportQuerySchema.safeParse(request.query ?? {});
    if (!query.success) throw new DomainError('missing_request_data', 'format must be json or csv');
    const csv = query.data.format === 'csv';
    const headers = { 'x-request-id': request.id, ...userHeaders(admitted) };
    const source: ExportSource = {
      async get(service, url) {
        const res = await serviceOf(service).request({ method: 'GET', url, headers });
        const type = res.headers['content-type'];
        const retryAfter = res.headers['retry-after'];
        if (res.statusCode !== 200) throw new ServiceAnswered(res.statusCode, res.body, typeof type === 'string' ? type : 'application/json; charset=utf-8', typeof retryAfter === 'string' ? retryAfter : undefined);
        return JSON.parse(bodyText(res)) as Record<string, unknown>;
      },
    };
    const type = csv ? 'application/zip' : 'application/json; charset=utf-8';
    if (request.method === 'HEAD') return reply.type(type).send();
    await exportSlots.take(user.userId);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      void exportSlots.release(user.userId).catch(() => undefined);
    };
    const refresh = () => exportSlots.refresh(user.userId);
    try {
      const body = csv ? csvZip(source, refresh) : Readable.from(jsonDocument(await readSmallSections(source, user.handle), source, new Date(), refresh), { highWaterMark: 1 });
      body.once('close', release);
      body.once('error', (error) => request.log.warn({ err: error }, 'export cut off'));
      reply.raw.once('close', release);
      reply.header('content-disposition', `attachment; filename="castie-export.${csv ? 'zip' : 'json'}"`);
      return reply.type(type).send(body);
    } catch (error) {
      release();
      if (!(error instanceof ServiceAnswered)) throw error;
      if (error.retryAfter) reply.header('retry-after', error.retryAfter);
      return reply.code(error.statusCode).type(error.contentType).send(error.body);
    }
  }
  app.route({ method: ['GET', 'HEAD'], url: '/api/export/', handler: ownDataExport });
  app.route({
    method: ALL_METHODS.filter((m) => m !== 'GET' && m !== 'HEAD'),
    url: '/api/export/',
    handler: async (request, reply) => reply.code(400).send(errorBody('incorrect_request_type', `${request.method} is not accepted here; use GET`)),
  });

  function forward(route: PublicRoute) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const target = route.methods.get(request.method)!;
      if (route.path.startsWith('/api/')) requireApiKey(request);
      // With HTTP Basic the caller is known before the body is read: nobody unauthenticated gets
      // to store a file. Credentials in a multipart body can only be checked after reading it.
      const basicUser = target.access === 'user' && /^Basic\s/i.test(request.headers.authorization ?? '') ? await authenticated(request, {}) : null;
      if (route.path.startsWith('/api/signup/')) await guard.signUpStep(request.ip);
      const { fields: body, stored } = await bodyOf(request, target.uploads);
      const headers: Record<string, string> = { 'x-request-id': request.id };
      let userId: string | null = null;
      let res;
      try {
        if (target.access === 'user') {
          const admitted = basicUser ?? (await authenticated(request, body));
          userId = admitted.user.userId;
          Object.assign(headers, userHeaders(admitted));
        }
        if (route.path === '/password_reset/' && request.method === 'POST') await guard.resetMail(typeof body.email === 'string' ? body.email : '', request.ip);
        const method = request.method === 'HEAD' ? 'GET' : request.method;
        res = await serviceOf(target.service).request({ method, url: request.url, headers, ...(method === 'GET' ? {} : { body }) });
      } catch (error) {
        await discard(stored);
        throw error;
      }
      // A refused request keeps none of the files it stored itself (and touches no others).
      if (res.statusCode >= 400) await discard(stored);
      const written = res.headers[internalHeaders.written];
      // Without credentials (a sign-up step), the service names whose writes they are.
      const writtenFor = res.headers[internalHeaders.writtenFor];
      const writer = userId ?? (target.access !== 'user' && typeof writtenFor === 'string' ? writtenFor : null);
      // The write is made: a cache that fails here costs the writer's next read its wait, not this answer.
      if (writer && typeof written === 'string') await sessions.add(writer, parsePositions(written)).catch((error: unknown) => request.log.warn({ err: error }, 'the session positions of a write could not be kept: the next request may not see it at once'));
      const contentType = res.headers['content-type'];
      reply.code(res.statusCode);
      if (typeof contentType === 'string') reply.header('content-type', contentType);
      // A service that is briefly unavailable (503 while an operator rebuilds its read models)
      // says when to come back; clients must see that too.
      const retryAfter = res.headers['retry-after'];
      if (typeof retryAfter === 'string') reply.header('retry-after', retryAfter);
      return reply.send(res.body);
    };
  }

  /** The counts `GET /api/initialize/` answers the user now (after their own last writes). */
  async function countsOf(user: AuthenticatedUser) {
    const headers = { 'x-request-id': `live-${user.userId}`, ...userHeaders({ user, after: await sessions.get(user.userId) }) };
    const res = await serviceOf('notifications').request({ method: 'GET', url: '/api/initialize/', headers });
    if (res.statusCode !== 200) throw new Error(`initialize answered ${res.statusCode}`);
    return NotificationCountsSchema.parse(JSON.parse(bodyText(res)));
  }

  /**
   * Live notification counts over Server-Sent Events, served here (see LiveStreams for why), and
   * the short-lived tokens browsers open them with.
   */
  function liveRoutes(): void {
    const streamPath = notificationsLiveApi.stream.paths[0]!;
    const tokenPath = notificationsLiveApi.streamToken.paths[0]!;
    app.post(tokenPath, async (request) => {
      requireApiKey(request);
      const { user } = await authenticated(request, (await bodyOf(request, [])).fields);
      return { status: 200, ...(await tokens.issue(user)) };
    });
    app.route({ method: ['GET', 'HEAD'], url: streamPath, handler: openStream });
    async function openStream(request: FastifyRequest, reply: FastifyReply) {
      const token = (request.query as Record<string, unknown>).token;
      // EventSource cannot send an Api-Key header either: the token stands for it, as it was
      // issued to a request that carried one.
      if (typeof token !== 'string') requireApiKey(request);
      let user: AuthenticatedUser | null;
      if (typeof token === 'string') {
        user = await tokens.userOf(token);
        if (!user) throw new DomainError('authentication_failed', 'the stream token is unknown or has expired: ask POST /api/notifications/stream-token/ for a new one');
        await guard.userRequest(user.userId);
      } else ({ user } = await authenticated(request, await readGetBody(request)));
      live.admit(user.userId);
      // HEAD answers as GET would, without the endless body.
      if (request.method === 'HEAD') return reply.code(200).header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform').send();
      const lastEventId = request.headers['last-event-id'];
      reply.hijack();
      // Headers set by the hooks (CORS) go out with the stream's own; onSend hooks do not run.
      reply.raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'x-request-id': request.id,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        // Proxies (nginx ingress) must pass events on at once, not buffer them.
        'x-accel-buffering': 'no',
      });
      live.open(user, reply.raw, typeof lastEventId === 'string' && lastEventId.length <= 64 ? lastEventId : null);
      return reply;
    }
    for (const [path, methods] of [[streamPath, ['GET', 'HEAD']], [tokenPath, ['POST']]] as const) {
      app.route({
        method: ALL_METHODS.filter((m) => !(methods as readonly string[]).includes(m)),
        url: path,
        handler: async (request, reply) => reply.code(400).send(errorBody('incorrect_request_type', `${request.method} is not accepted here; use ${methods[0]}`)),
      });
    }
  }

  for (const route of publicRoutes()) {
    const methods = [...route.methods.keys()] as (typeof ALL_METHODS)[number][];
    // HEAD works wherever GET does: the same answer without its body.
    const get = route.methods.get('GET');
    if (get) route.methods.set('HEAD', get);
    app.route({ method: get ? [...methods, 'HEAD'] : methods, url: route.path, handler: forward(route) });
    const others = ALL_METHODS.filter((m) => !route.methods.has(m));
    app.route({
      method: others,
      url: route.path,
      handler: async (request, reply) => reply.code(400).send(errorBody('incorrect_request_type', `${request.method} is not accepted here; use ${methods.join(' or ')}`)),
    });
  }

  liveRoutes();
  mediaRoutes(app, deps.media);
  const openApi = openApiDocument();
  app.route({ method: ['GET', 'HEAD'], url: '/docs/openapi.json', handler: async () => openApi });
  docsRoutes(app, openApi);
  adminRoutes(app, { token: deps.adminToken, manualClock: deps.manualClock ?? null, services: deps.services, media: deps.media, maxUploadBytes });
  return app;
}

/** Fastify does not read bodies of GET requests; clients that send credentials in one still work. */
async function readGetBody(request: FastifyRequest): Promise<Record<string, unknown>> {
  const type = request.headers['content-type'] ?? '';
  const length = Number(request.headers['content-length'] ?? 0);
  if (!(length > 0) || length > 64 * 1024) return {};
  const chunks: Buffer[] = [];
  for await (const chunk of request.raw) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (type.includes('application/json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}
