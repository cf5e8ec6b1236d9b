import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** A Redis for tests: its URL, or null with the reason there is none. */
export interface TestRedis {
  url: string | null;
  /** How the Redis was found, or why there is none (shown in skipped test names). */
  reason: string;
  /** Stops the server this helper started; a no-op for REDIS_URL or when there is none. */
  stop(): Promise<void>;
}

let shared: Promise<TestRedis> | null = null;

/**
 * The Redis that Redis specs run against: the run's own server (see setupRedisForTestRun), else
 * REDIS_URL when set, else a throwaway `redis-server` (no persistence) on a free port started
 * here, when the binary exists;
 * otherwise none, and specs skip by name with `reason`. Tests isolate themselves by key prefix.
 */
export function testRedis(): Promise<TestRedis> {
  shared ??= findOrStart();
  return shared;
}

async function findOrStart(): Promise<TestRedis> {
  const forRun = process.env[STARTED_FOR_THE_RUN];
  if (forRun) return { url: forRun, reason: `redis-server for the test run (${forRun})`, stop: async () => {} };
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return { url: fromEnv, reason: 'REDIS_URL', stop: async () => {} };
  return startRedisServer();
}

/**
 * The URL of the server the run's global setup started. Not REDIS_URL: the servers that tests
 * start as a user would (`npm start`) inherit the environment, and must not find a Redis there.
 */
const STARTED_FOR_THE_RUN = 'CASTIE_TEST_REDIS_URL';

/**
 * Vitest's global setup (vitest.config.ts): one throwaway `redis-server` for the whole run, started
 * in vitest's own process and passed to the workers (CASTIE_TEST_REDIS_URL), and stopped by the teardown it
 * returns. A server started inside a worker outlived it: vitest ends its worker processes with a
 * signal, so their exit hooks never ran and every run left a redis-server per worker behind.
 */
export async function setupRedisForTestRun(): Promise<() => Promise<void>> {
  if (process.env.REDIS_URL) return async () => {};
  const redis = await startRedisServer();
  if (redis.url) process.env[STARTED_FOR_THE_RUN] = redis.url;
  return async () => {
    await redis.stop();
    delete process.env[STARTED_FOR_THE_RUN];
  };
}

async function startRedisServer(): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    return { url: null, reason: 'no redis-server binary and REDIS_URL unset', stop: async () => {} };
  }
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir(), '--loglevel', 'warning'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Never leave a server behind, even when the run ends without afterAll.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await waitForPong(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`redis-server did not start on port ${port}: ${(error as Error).message} ${stderr}`.trim());
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    reason: `redis-server on port ${port}`,
    async stop() {
      process.off('exit', killOnExit);
      await stopProcess(child);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls with a raw PING until the server answers +PONG, the process dies, or 10 s pass. */
async function waitForPong(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    if (await ping(port)) return;
    await sleep(50);
  }
  throw new Error('no PONG within 10 s');
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
