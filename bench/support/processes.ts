// Benchmarks' child processes: a Castie server started from any checkout of the code (so two
// versions are measured side by side on the same data), a bare Fastify server that sends fixed
// bytes (the wire limit a route is compared with), and load from autocannon.
import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Node's arguments that run a script of bench/support with the sources compiled as the build
 * compiles them (compiled-sources.mjs): the in-process timings measure the code `npm start` runs.
 */
export const compiledScript = (script: string): string[] => ['--import', fileURLToPath(new URL('./compiled-sources.mjs', import.meta.url)), fileURLToPath(new URL(`./${script}`, import.meta.url))];

/** The checkout's built server (`npm run build`, which `npm start` runs first), built now if stale; null when it has no build. */
function builtEntry(root: string): string[] | null {
  if (!existsSync(join(root, 'scripts/build.mjs'))) return null;
  execFileSync(process.execPath, [join(root, 'scripts/castie.mjs'), 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const main = join(root, 'packages/system/dist/main.js');
  return existsSync(main) ? [main] : null;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

/** Resident and peak memory of a process, in MB (Linux /proc). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

export interface RunningServer {
  port: number;
  pid: number;
  /** From spawn to the first HTTP answer, in ms. */
  firstAnswerMs: number;
  /** What the server itself reported as its start time (after its code was loaded), in ms. */
  reportedStartMs: number | null;
  /** pino lines the server printed (JSON, parsed). */
  lines: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** GET a URL; resolves with the status (any status means the server answers). */
async function statusOf(url: string): Promise<number | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return null;
  }
}

/**
 * Starts the server of the checkout at `root` on `dataDir` as `npm start` runs it: its built
 * `packages/system/dist/main.js` (built first, outside the timing, when its sources are newer;
 * plain node, no tsx loader compiling TypeScript at start), and resolves once it answers HTTP. A
 * checkout without that build runs `packages/system/src/main.ts` through tsx, as it did then.
 * `nodeArgs` go to node itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export async function startCastie(root: string, dataDir: string, env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<RunningServer> {
  const port = await freePort();
  const entry = builtEntry(root) ?? ['--import', 'tsx', join(root, 'packages/system/src/main.ts')];
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: root,
    // One user drives all the load: its request budget (an abuse limit) must not be what is measured.
    // MALLOC_ARENA_MAX as `npm start` and the image set it (README), unless the caller's differs.
    env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_TOKEN: 'bench-admin-token-0123456789', SECRET: 'bench-secret-0123456789abcdef', USER_REQUESTS_PER_MINUTE: '1000000000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  // The server's log as it comes. Its request lines (thousands a second under load) are not
  // what a bench reads: parsing them here, in the process that runs the load generator, took a
  // core's share from the load, and a pipe read too slowly blocks the server's synchronous log.
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const pieces = (buffered + chunk).split('\n');
    buffered = pieces.pop()!;
    for (const line of pieces) {
      if (line.includes('"msg":"request completed"')) continue;
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = once(child, 'exit');
  let firstAnswerMs = 0;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server at ${root} exited with ${child.exitCode}: ${stderr}`);
    if ((await statusOf(`http://127.0.0.1:${port}/api/groups/`)) !== null) {
      firstAnswerMs = performance.now() - started;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const listening = lines.find((l) => typeof l.msg === 'string' && l.msg.includes('is listening'));
  return {
    port,
    pid: child.pid!,
    firstAnswerMs,
    reportedStartMs: typeof listening?.ms === 'number' ? listening.ms : null,
    lines,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A bare Fastify server in its own process that answers every GET with `body` (same length and
 * content type as the route it stands for): what the hardware allows for those bytes.
 */
export async function startBareFastify(root: string, body: Buffer, contentType: string): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  // The bytes go through a file: a large page does not fit in a command line.
  const bodyFile = join(mkdtempSync(join(tmpdir(), 'castie-bare-')), 'body');
  writeFileSync(bodyFile, body);
  const script = `
    const { createRequire } = require('node:module');
    const req = createRequire(${JSON.stringify(join(root, 'packages/platform/package.json'))});
    const fastify = req('fastify')({ logger: false });
    const body = require('node:fs').readFileSync(${JSON.stringify(bodyFile)});
    fastify.get('/*', (request, reply) => { reply.header('content-type', ${JSON.stringify(contentType)}); reply.send(body); });
    fastify.listen({ port: ${port}, host: '127.0.0.1' }).then(() => process.stdout.write('ready\\n'));
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
      rmSync(dirname(bodyFile), { recursive: true, force: true });
    },
  };
}

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc; 100 ticks/s). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Resolves once the process has been quiet (under 5 % of a core) for `quietMs`, with how long that
 * took in ms (from the call to the start of the quiet spell); null when it was not quiet within
 * `maxMs`. A server that answers may still work in the background: the policies' first pass over
 * a long history runs after the first answer.
 */
export async function untilQuiet(pid: number, options: { quietMs?: number; maxMs?: number } = {}): Promise<number | null> {
  const quietMs = options.quietMs ?? 1000;
  const maxMs = options.maxMs ?? 180_000;
  const step = 250;
  const started = performance.now();
  let last = cpuMsOf(pid);
  let quietSince: number | null = null;
  while (performance.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, step));
    const now = performance.now();
    const cpu = cpuMsOf(pid);
    if (cpu - last <= 0.05 * step) quietSince ??= now - step;
    else quietSince = null;
    last = cpu;
    if (quietSince !== null && now - quietSince >= quietMs) return quietSince - started;
  }
  return null;
}

export interface Load {
  requestsPerSecond: number;
  /** Requests answered in all. */
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  bytesPerRequest: number;
}

/** autocannon against one URL: `connections` clients for `seconds`. */
export async function load(url: string, options: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<Load> {
  const result = await autocannon({ url, connections: options.connections, duration: options.seconds, headers: options.headers ?? {}, timeout: 10 });
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    bytesPerRequest: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
  };
}
