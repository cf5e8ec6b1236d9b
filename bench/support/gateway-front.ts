// Run by the gateway benchmark in a child process, from any checkout of the code (argv[2]): starts
// the embedded system on a data directory with its gateway on one port, and on another a bare
// Fastify "front" that forwards GETs to the same services in the same way (the in-process client)
// as a fixed user, with no credentials, API key, session or limits: the same request without
// what the gateway adds. On a third port, a second gateway from the same code (same routes,
// hooks, request lines and request metrics; no API keys or CORS origins, as the bench's system
// has none; the system's cache, or one of its own on a checkout that does not expose it) whose
// admission is the standard one for a request with credentials, and admits a request without
// any as that user (no credential check, abuse guard's locks and budget, or session positions):
// one gateway serves the same request with and without credentials, so that nothing but
// admission differs between the two (not the instance, its port or its place in the process;
// earlier runs compared the system's gateway with a second one). A checkout that admits every
// request on the third port as that user (it cannot wrap the standard admission) says
// `wraps: no`; one whose gateway cannot be told how to admit has no third port
// (`without-credentials: no`). Prints `ready` once they listen.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Contracts from '../../packages/contracts/src/index.ts';
import type * as System from '../../packages/system/src/index.ts';
import type * as Platform from '../../packages/platform/src/index.ts';
import type * as Gateway from '../../services/gateway/src/index.ts';

const [root, dataDir, gatewayPort, frontPort, withoutCredentialsPort, handle, password] = process.argv.slice(2) as [string, string, string, string, string, string, string];
const system = (await import(pathToFileURL(join(root, 'packages/system/src/index.ts')).href)) as typeof System;
const contracts = (await import(pathToFileURL(join(root, 'packages/contracts/src/index.ts')).href)) as typeof Contracts;
const platform = (await import(pathToFileURL(join(root, 'packages/platform/src/index.ts')).href)) as typeof Platform;
// The logger `npm start` makes (src/main.ts): without one the system logs nothing, and the
// gateway's request lines, which production writes, would not be measured.
const pino = createRequire(join(root, 'packages/platform/package.json'))('pino') as (options: object) => System.EmbeddedOptions['logger'];
const config = system.readEmbeddedConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', ADMIN_TOKEN: 'bench-admin-token-0123456789', SECRET: 'bench-secret-0123456789abcdef', USER_REQUESTS_PER_MINUTE: '1000000000', ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) });
const logger = pino(platform.loggerOptions({ level: config.LOG_LEVEL }));
const running = await system.startEmbedded(config, { logger });
const basic = `Basic ${Buffer.from(`${handle}@example.com:${password}`).toString('base64')}`;
const profile = await running.gateway.inject({ method: 'GET', url: `/api/profile/${handle}/stats/?ids_only=True`, headers: { authorization: basic } });
if (profile.statusCode !== 200) throw new Error(`profile of ${handle}: ${profile.payload.slice(0, 300)}`);
const userId = (JSON.parse(profile.payload) as { profileInfo: { user_uuid: string } }).profileInfo.user_uuid;
const user = { [contracts.internalHeaders.userId]: userId, [contracts.internalHeaders.handle]: handle, [contracts.internalHeaders.email]: `${handle}@example.com` };
const serviceOf = new Map(contracts.allEndpoints.filter((e) => e.method === 'GET').flatMap((e) => e.paths.map((p) => [p, e.service] as const)));

// Fastify as the checkout has it (bench/ is outside the workspace packages).
interface Reply {
  code(status: number): Reply;
  header(name: string, value: string): Reply;
  send(body: unknown): Reply;
}
interface Front {
  get(path: string, handler: (request: { url: string; id: string }, reply: Reply) => Promise<Reply>): void;
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<void>;
}
const Fastify = createRequire(join(root, 'packages/platform/package.json'))('fastify') as (options: object) => Front;
const front = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
for (const [path, service] of serviceOf) {
  front.get(path, async (request, reply) => {
    // Older checkouts had no clients to hand out: their front injects, as their gateway did.
    const client = (running as { clients?: typeof running.clients }).clients?.[service];
    const res = client
      ? await client.request({ method: 'GET', url: request.url, headers: { ...user, 'x-request-id': String(request.id) } })
      : await running.services.get(service)!.app.inject({ method: 'GET', url: request.url, headers: user }).then((r) => ({ statusCode: r.statusCode, headers: r.headers, body: r.rawPayload }));
    reply.code(res.statusCode);
    if (typeof res.headers['content-type'] === 'string') reply.header('content-type', res.headers['content-type']);
    return reply.send(res.body);
  });
}
// The gateway with and without credentials: on the same service clients, with request metrics
// (installOperations). A function with an `admit` of its own: a checkout whose gateway takes a
// function wraps its standard admission with it; an older one admits every request with `admit`.
const gateway = (await import(pathToFileURL(join(root, 'services/gateway/src/index.ts')).href)) as typeof Gateway;
const admitted = { user: { userId, handle, email: `${handle}@example.com` }, after: [] };
/** Admission as the gateway takes it (GatewayDeps.admission), not written again here. */
type Admit = Extract<NonNullable<Gateway.GatewayDeps['admission']>, { admit: unknown }>['admit'];
const wrap = Object.assign(
  (standard: { admit: Admit }) => ({
    admit: ((request, body) => (request.headers.authorization === undefined ? Promise.resolve(admitted) : standard.admit(request, body))) satisfies Admit,
  }),
  { admit: (async () => admitted) satisfies Admit },
);
const mediaDir = mkdtempSync(join(tmpdir(), 'castie-bench-media-'));
const withoutCredentials = await gateway.buildGatewayApp({
  services: running.clients,
  media: platform.createLocalMediaStore({ dir: mediaDir }),
  cache: (running as { cache?: typeof running.cache }).cache ?? platform.createMemoryCache(),
  adminToken: config.adminToken,
  abuseLimits: { requestsPerUserPerMinute: config.USER_REQUESTS_PER_MINUTE },
  logger,
  admission: wrap,
});
platform.installOperations(withoutCredentials, { service: 'gateway', metrics: new platform.Metrics(), readiness: new platform.ReadinessProbe() });
const admits = (await withoutCredentials.inject({ method: 'GET', url: '/api/preferences/' })).statusCode === 200;
// Wrapped: credentials are checked (a wrong password is refused); not wrapped: admitted anyway.
const wrong = `Basic ${Buffer.from(`${handle}@example.com:not-${password}`).toString('base64')}`;
const wraps = admits && (await withoutCredentials.inject({ method: 'GET', url: '/api/preferences/', headers: { authorization: wrong } })).statusCode === 401;

await running.gateway.listen({ port: Number(gatewayPort), host: '127.0.0.1' });
await front.listen({ port: Number(frontPort), host: '127.0.0.1' });
if (admits) await withoutCredentials.listen({ port: Number(withoutCredentialsPort), host: '127.0.0.1' });
process.stdout.write(`ready without-credentials: ${admits ? 'yes' : 'no'} wraps: ${wraps ? 'yes' : 'no'}\n`);
process.once('SIGTERM', () => {
  void Promise.all([front.close(), withoutCredentials.close()])
    .then(() => running.close())
    .then(() => rmSync(mediaDir, { recursive: true, force: true }))
    .then(() => process.exit(0));
});
