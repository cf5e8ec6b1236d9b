// What the gateway costs a request: the same GET through the gateway with credentials (HTTP
// Basic checked, API key, session positions, rate limits, its request line at LOG_LEVEL=info, as
// in production) and through a bare Fastify front in the same process that forwards it to the
// same service the same way as a fixed user (bench/support/gateway-front.ts), logging nothing. Requests/s at 10 connections,
// p50, and the server's CPU time per request meanwhile (steadier than requests/s: the load
// generator shares the machine's cores and nears its own limit), on the seeded history, for this
// checkout and, with --compare <checkout>, another one, in the same run.
//
// With --redis the cache port is a Redis server (started here, as the tests start theirs) instead
// of process memory, as in the cluster: what a request waits on the cache then shows. With
// --redis-delay-ms N every packet between the server and Redis is held N ms each way by a relay
// in this process once the server is up, as a network between them would (loopback answers in
// microseconds).
// --connections N sets the load's connections (10).
//
// npm run bench -- gateway [--compare <checkout>] [--seconds 5] [--redis [--redis-delay-ms 1]] [--connections 10] [--users 10000 ...]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB, sideBySide, sizesFrom } from './support/data-set.ts';
import { cpuMsOf, freePort, load, type Load } from './support/processes.ts';
import { benchArgs, printTable } from './support/cli.ts';
import { testRedis } from '../packages/platform/src/testing/servers/redis.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const sizes = sizesFrom(flag);
const seconds = Number(flag('seconds', '5'));
const say = (line: string) => process.stderr.write(`gateway: ${line}\n`);
const connections = Number(flag('connections', '10'));
const redis = has('redis') ? await testRedis() : null;
if (redis && !redis.url) throw new Error(`--redis: ${redis.reason}`);
const redisDelayMs = Number(flag('redis-delay-ms', '0'));
const relay = redis?.url && redisDelayMs > 0 ? await delayingRelay(new URL(redis.url)) : null;
const redisUrl = relay?.url ?? redis?.url;

/**
 * A TCP relay to `target` that holds every chunk `delayMs` before passing it on, both ways, in
 * order (a chunk is never due before the one ahead of it). The delay is 0 while a server starts
 * (it fills the leaderboards' sorted sets) and set for the measurements.
 */
async function delayingRelay(target: URL): Promise<{ url: string; delayMs: number }> {
  const state = { url: '', delayMs: 0 };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    // As Redis and ioredis do: without it, Nagle's algorithm holds small writes for the ACK of
    // the one before, which the delay turns into stalls of tens of milliseconds.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const pass = (from: Socket, to: Socket) => {
      let lastDue = 0;
      from.on('data', (chunk) => {
        const now = performance.now();
        const due = Math.max(now + state.delayMs, lastDue);
        lastDue = due;
        if (due <= now) to.write(chunk);
        else setTimeout(() => to.write(chunk), due - now);
      });
    };
    pass(client, upstream);
    pass(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  server.unref();
  state.url = `redis://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}

const auth = { authorization: `Basic ${Buffer.from(`${HUB.email}:${HUB.password}`).toString('base64')}` };
const PATHS = ['/api/preferences/', '/api/hamburger/', '/api/home/following/'];

/** A load's figures and the server process's CPU time per request meanwhile (µs). */
type Measured = Load & { cpuUsPerRequest: number };

interface Figures {
  label: string;
  paths: Map<string, { gateway: Measured; front: Measured }>;
}

async function measure(label: string, root: string, dir: string): Promise<Figures> {
  const [gatewayPort, frontPort] = [await freePort(), await freePort()];
  say(`${label}: starting`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'bench/support/gateway-front.ts'), root, dir, String(gatewayPort), String(frontPort), HUB.handle, HUB.password], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) } });
  const exited = once(child, 'exit');
  await new Promise<void>((ready, failed) => {
    let buffered = '';
    const untilReady = (chunk: string) => {
      buffered = (buffered + chunk).slice(-100_000);
      if (!/^ready$/m.test(buffered)) return;
      // From then on the gateway's request lines are drained, not searched: searching 100 KB
      // per chunk took CPU from the load generator, in this process, while only the gateway logs.
      child.stdout!.off('data', untilReady).on('data', () => undefined);
      ready();
    };
    child.stdout!.setEncoding('utf8').on('data', untilReady);
    child.once('exit', (code) => failed(new Error(`${label}: the gateway front exited with ${code}`)));
  });
  const paths = new Map<string, { gateway: Measured; front: Measured }>();
  // CPU per request is steadier than requests/s here: the load generator shares the machine's
  // two cores with the server, and at tens of thousands of requests/s it is near its own limit.
  const measured = async (url: string, options: Parameters<typeof load>[1]): Promise<Measured> => {
    const before = cpuMsOf(child.pid!);
    const result = await load(url, options);
    return { ...result, cpuUsPerRequest: ((cpuMsOf(child.pid!) - before) * 1000) / Math.max(1, result.requests) };
  };
  if (relay) relay.delayMs = redisDelayMs;
  try {
    for (const path of PATHS) {
      say(`${label}: ${path}, ${seconds} s per row`);
      const gatewayUrl = `http://127.0.0.1:${gatewayPort}${path}`;
      const frontUrl = `http://127.0.0.1:${frontPort}${path}`;
      await load(gatewayUrl, { connections, seconds: 1, headers: auth });
      await load(frontUrl, { connections, seconds: 1 });
      // Alternating halves, so a burst of noise on the shared machine hits both sides alike.
      const runs = { gateway: [] as Measured[], front: [] as Measured[] };
      for (let i = 0; i < 2; i++) {
        runs.gateway.push(await measured(gatewayUrl, { connections, seconds: seconds / 2, headers: auth }));
        runs.front.push(await measured(frontUrl, { connections, seconds: seconds / 2 }));
      }
      const merged = (l: Measured[]): Measured => ({
        ...l[0]!,
        requestsPerSecond: (l[0]!.requestsPerSecond + l[1]!.requestsPerSecond) / 2,
        p50: (l[0]!.p50 + l[1]!.p50) / 2,
        errors: l[0]!.errors + l[1]!.errors,
        non2xx: l[0]!.non2xx + l[1]!.non2xx,
        cpuUsPerRequest: (l[0]!.cpuUsPerRequest + l[1]!.cpuUsPerRequest) / 2,
      });
      paths.set(path, { gateway: merged(runs.gateway), front: merged(runs.front) });
    }
  } finally {
    if (relay) relay.delayMs = 0;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  return { label, paths };
}

const runs = await sideBySide(here, sizes, compare, say, measure);

const f0 = (n: number) => Math.round(n).toLocaleString('en');
const f1 = (n: number) => n.toFixed(1);
const rows: [string, (r: Figures) => string][] = [];
for (const path of PATHS) {
  const p = (r: Figures) => r.paths.get(path)!;
  rows.push(
    [path, () => ''],
    ['  through the gateway, with credentials: req/s', (r) => f0(p(r).gateway.requestsPerSecond)],
    ['  the same request without the gateway: req/s', (r) => f0(p(r).front.requestsPerSecond)],
    ['  = the gateway\'s cost per request (%)', (r) => `+${f1((p(r).front.requestsPerSecond / p(r).gateway.requestsPerSecond - 1) * 100)}`],
    ['  server CPU per request with / without (µs)', (r) => `${f0(p(r).gateway.cpuUsPerRequest)} / ${f0(p(r).front.cpuUsPerRequest)}`],
    ['  = the gateway\'s CPU per request (%)', (r) => `+${f1((p(r).gateway.cpuUsPerRequest / p(r).front.cpuUsPerRequest - 1) * 100)}`],
    ['  p50 with / without (ms)', (r) => `${f1(p(r).gateway.p50)} / ${f1(p(r).front.p50)}`],
    ['  errors, non-2xx', (r) => `${p(r).gateway.errors + p(r).front.errors}, ${p(r).gateway.non2xx + p(r).front.non2xx}`],
  );
}
process.stdout.write(`\nthe gateway's cost${redis ? ` with the cache in Redis${redisDelayMs > 0 ? ` ${redisDelayMs} ms away each way` : ''}` : ''} on ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}; as ${HUB.handle}; ${connections} connections, ${seconds} s per row\n\n`);
printTable(runs, rows);
await redis?.stop();
