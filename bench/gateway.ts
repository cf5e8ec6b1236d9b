// What the gateway costs a request, and what authentication costs within it: the same GET
//  - through the gateway with credentials (HTTP Basic checked, session positions, rate limits,
//    its request line at LOG_LEVEL=info, as in production);
//  - through a second gateway in the same process, built the same way, with credentials (its
//    standard admission) and without any (it admits those as the same user: no credential check,
//    locks, budget or session positions): what authentication costs, on one gateway, so that
//    nothing else differs (an older checkout, whose second gateway admits every request as that
//    user, compares the first gateway with it, as earlier runs did);
//  - through a bare Fastify front in the same process that forwards it to the same service the
//    same way as that user, logging nothing: the same request without the gateway
// (bench/support/gateway-front.ts). Requests/s at 10 connections, p50, and the server's CPU time
// per request meanwhile (steadier than requests/s: the load generator shares the machine's cores
// and nears its own limit), on the seeded history, for this checkout and, with --compare
// <checkout>, another one, in the same run. A checkout whose gateway cannot be told how to admit
// shows n/a for the second gateway.
//
// Each side is measured in slices of 1 s, the sides in turn (--slices N, 10 by default); figures
// are medians of the slices, and a cost is the median of the ratios of slices measured one after
// the other. On this shared machine the load drifts by more than the 5 % a cost is held to
// between longer rows; pairing neighbouring slices cancels that drift.
//
// With --redis the cache port is a Redis server (started here, as the tests start theirs) instead
// of process memory, as in the cluster: what a request waits on the cache then shows. With
// --redis-delay-ms N every packet between the server and Redis is held N ms each way by a relay
// in this process once the server is up, as a network between them would (loopback answers in
// microseconds).
// --connections N sets the load's connections (10).
//
// npm run bench -- gateway [--compare <checkout>] [--slices 10] [--redis [--redis-delay-ms 1]] [--connections 10] [--users 10000 ...]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB, sideBySide, sizesFrom } from './support/data-set.ts';
import { compiledScript, cpuMsOf, freePort, load, type Load } from './support/processes.ts';
import { benchArgs, printTable } from './support/cli.ts';
import { testRedis } from '../packages/platform/src/testing/servers/redis.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const sizes = sizesFrom(flag);
const slices = Number(flag('slices', '10'));
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

/** The four ways to the same request (see the top of this file). */
const SIDES = ['gateway', 'withCredentials', 'withoutCredentials', 'front'] as const;
type Side = (typeof SIDES)[number];

interface Figures {
  label: string;
  /** Per path, per side, its slices in the order measured; the second gateway's sides are missing for a checkout that cannot measure them. */
  paths: Map<string, Partial<Record<Side, Measured[]>>>;
}

async function measure(label: string, root: string, dir: string): Promise<Figures> {
  const second = await freePort();
  const ports: Record<Side, number> = { gateway: await freePort(), withCredentials: second, withoutCredentials: second, front: await freePort() };
  say(`${label}: starting`);
  const child = spawn(process.execPath, [...compiledScript('gateway-front.ts'), root, dir, String(ports.gateway), String(ports.front), String(ports.withoutCredentials), HUB.handle, HUB.password], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) } });
  const exited = once(child, 'exit');
  const [withoutCredentials, wraps] = await new Promise<[boolean, boolean]>((ready, failed) => {
    let buffered = '';
    const untilReady = (chunk: string) => {
      buffered = (buffered + chunk).slice(-100_000);
      const line = /^ready without-credentials: (yes|no)(?: wraps: (yes|no))?$/m.exec(buffered);
      if (!line) return;
      // From then on the gateway's request lines are drained, not searched: searching 100 KB
      // per chunk took CPU from the load generator, in this process, while only the gateway logs.
      child.stdout!.off('data', untilReady).on('data', () => undefined);
      ready([line[1] === 'yes', line[1] === 'yes' && line[2] === 'yes']);
    };
    child.stdout!.setEncoding('utf8').on('data', untilReady);
    child.once('exit', (code) => failed(new Error(`${label}: the gateway front exited with ${code}`)));
  });
  const sides = SIDES.filter((side) => (side !== 'withoutCredentials' || withoutCredentials) && (side !== 'withCredentials' || wraps));
  const paths: Figures['paths'] = new Map();
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
      say(`${label}: ${path}, ${slices} slices of 1 s per side`);
      const url = (side: Side) => `http://127.0.0.1:${ports[side]}${path}`;
      const headers = (side: Side) => (side === 'gateway' || side === 'withCredentials' ? auth : {});
      for (const side of sides) await load(url(side), { connections, seconds: 1, headers: headers(side) });
      // Short slices, the sides in turn (forwards, then backwards), so the shared machine's
      // drifts and bursts of noise hit every side alike: differences of a few percent show.
      const runs: Partial<Record<Side, Measured[]>> = {};
      for (let i = 0; i < slices; i++) {
        for (const side of i % 2 === 0 ? sides : [...sides].reverse()) (runs[side] ??= []).push(await measured(url(side), { connections, seconds: 1, headers: headers(side) }));
      }
      paths.set(path, runs);
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
const signed = (n: number) => `${n >= 0 ? '+' : ''}${f1(n)}`;
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
};
const rows: [string, (r: Figures) => string][] = [];
for (const path of PATHS) {
  const p = (r: Figures) => r.paths.get(path)!;
  /** The median of a side's slices, n/a when the checkout could not measure that side. */
  const of = (r: Figures, side: Side, value: (m: Measured) => number, show: (n: number) => string) => {
    const slices = p(r)[side];
    return slices ? show(median(slices.map(value))) : 'n/a';
  };
  /** What `more` costs over `less`: the median of the ratios of slices measured one after the other. */
  const percent = (r: Figures, more: Side, less: Side, value: (m: Measured) => number) => {
    const [a, b] = [p(r)[more], p(r)[less]];
    return a && b ? signed((median(a.map((m, i) => value(m) / value(b[i]!))) - 1) * 100) : 'n/a';
  };
  const perSecond = (m: Measured) => m.requestsPerSecond;
  const time = (m: Measured) => 1 / m.requestsPerSecond;
  /** With credentials on the second gateway, as without; on the first, for a checkout that cannot. */
  const authSide = (r: Figures): Side => (p(r).withCredentials ? 'withCredentials' : 'gateway');
  const cpu = (m: Measured) => m.cpuUsPerRequest;
  const p50 = (m: Measured) => m.p50;
  rows.push(
    [path, () => ''],
    ['  through the gateway, with credentials: req/s', (r) => of(r, 'gateway', perSecond, f0)],
    ['  through the second gateway, with credentials: req/s', (r) => of(r, 'withCredentials', perSecond, f0)],
    ['  through the second gateway, without credentials (a fixed user): req/s', (r) => of(r, 'withoutCredentials', perSecond, f0)],
    ['  without the gateway (a bare front): req/s', (r) => of(r, 'front', perSecond, f0)],
    ['  server CPU per request: gateway / second with, without credentials / without the gateway (µs)', (r) => SIDES.map((side) => of(r, side, cpu, f0)).join(' / ')],
    ['  = authentication\'s cost per request, in time / CPU (%)', (r) => `${percent(r, authSide(r), 'withoutCredentials', time)} / ${percent(r, authSide(r), 'withoutCredentials', cpu)}${authSide(r) === 'gateway' ? ' (against the first gateway)' : ''}`],
    ['  (the first gateway with credentials against the second without, as earlier runs compared them)', (r) => (authSide(r) === 'gateway' ? '-' : `${percent(r, 'gateway', 'withoutCredentials', time)} / ${percent(r, 'gateway', 'withoutCredentials', cpu)}`)],
    ['  = the whole gateway\'s cost per request, in time / CPU (%)', (r) => `${percent(r, 'gateway', 'front', time)} / ${percent(r, 'gateway', 'front', cpu)}`],
    ['  p50: gateway / second with, without credentials / without the gateway (ms)', (r) => SIDES.map((side) => of(r, side, p50, f1)).join(' / ')],
    ['  errors, non-2xx', (r) => { const all = Object.values(p(r)).flat(); return `${all.reduce((n, m) => n + m.errors, 0)}, ${all.reduce((n, m) => n + m.non2xx, 0)}`; }],
  );
}
process.stdout.write(`\nthe gateway's cost${redis ? ` with the cache in Redis${redisDelayMs > 0 ? ` ${redisDelayMs} ms away each way` : ''}` : ''} on ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}; as ${HUB.handle}; ${connections} connections; medians of ${slices} slices of 1 s per side, in turn\n\n`);
printTable(runs, rows);
await redis?.stop();
