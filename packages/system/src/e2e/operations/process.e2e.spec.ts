import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../../testing/processes.ts';

/*
 * The processes an operator runs, started for real: `npm start` as a newcomer types it, and the
 * built entry points as the image runs them. Every process started here is stopped and checked
 * gone (or killed in afterEach if a test failed half-way).
 */
const root = resolve(import.meta.dirname, '../../../../..');
const dist = join(root, 'packages/system/dist');
const started: ChildProcess[] = [];
const dataDirs: string[] = [];

const childrenOf = (pid: number): number[] =>
  spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'castie-process-'));
  dataDirs.push(dir);
  return dir;
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `detached`: the child leads a process group of its own, as a shell's foreground job does. */
function launch(command: string, args: string[], env: Record<string, string>, options: { detached?: boolean } = {}): Started {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  started.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));
  return { child, output: () => text, exited };
}

async function listening(run: Started, timeoutMs = 60_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const port = /listening on http:\/\/localhost:(\d+)/.exec(run.output())?.[1];
    if (port) return Number(port);
    if (run.child.exitCode !== null) throw new Error(`the server exited before listening:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the server did not listen within ${timeoutMs} ms:\n${run.output()}`);
}

async function gone(pid: number, timeoutMs = 20_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** An HTTP request whose body arrives in two parts, the second when `finish()` is called. */
function slowRequest(port: number, path: string, body: string) {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString()));
  const closed = new Promise<string>((done) => {
    socket.on('close', () => done(answer));
    socket.on('error', () => undefined);
  });
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  const half = Math.floor(body.length / 2);
  const sent = new Promise<void>((done) => socket.on('connect', () => socket.write(head + body.slice(0, half), () => done())));
  return { sent, finish: () => socket.end(body.slice(half)), closed, destroy: () => socket.destroy() };
}

beforeAll(() => {
  // The built entry points are what production runs; build them once for this file.
  const build = spawnSync(process.execPath, ['scripts/castie.mjs', 'build'], { cwd: root, encoding: 'utf8' });
  expect(build.status, build.stdout + build.stderr).toBe(0);
}, 180_000);

afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.pid && alive(child.pid)) {
      for (const pid of childrenOf(child.pid)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }
  }
});

afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('runs the server as npm plus one node process, even with NODE_ENV=production, and SIGTERM to npm stops both', async () => {
    const run = launch('npm', ['start'], { PORT: '0', DATA_DIR: freshDataDir(), NODE_ENV: 'production' });
    const port = await listening(run);
    const npm = run.child.pid!;
    const [server, ...others] = childrenOf(npm);
    expect(others).toEqual([]);
    expect(server).toBeGreaterThan(0);
    expect(childrenOf(server!)).toEqual([]);
    expect(spawnSync('ps', ['-o', 'args=', '-p', String(server)], { encoding: 'utf8' }).stdout).toMatch(/^node .*scripts\/castie\.mjs start/);
    // glibc's malloc arenas limited to two (README), unless whoever starts it chose otherwise.
    expect(readFileSync(`/proc/${server}/environ`, 'utf8').split('\0')).toContain(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? '2'}`);

    const res = await fetch(`http://127.0.0.1:${port}/api/initialize/`);
    expect(res.status).toBe(401);

    process.kill(npm, 'SIGTERM');
    expect(await gone(server!)).toBe(true);
    expect(await gone(npm)).toBe(true);
    expect(run.output()).toMatch(/"signal":"SIGTERM".*closing/);
    expect(run.output()).toMatch(/"msg":"closed"/);
  }, 180_000);
});

describe('Ctrl-C on npm start', () => {
  it('drains the request in flight: the terminal signals npm and the server, and npm forwards it once more', async () => {
    const run = launch('npm', ['start'], { PORT: '0', DATA_DIR: freshDataDir() }, { detached: true });
    const port = await listening(run);
    const [server] = childrenOf(run.child.pid!);
    const email = `ctrl-c-${Date.now()}@example.com`;
    const request = slowRequest(port, '/api/signup/email/', `email=${encodeURIComponent(email)}`);
    await request.sent;
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground job.
    process.kill(-run.child.pid!, 'SIGINT');
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(server!), run.output()).toBe(true); // still draining
    request.finish();
    expect(await request.closed).toMatch(/^HTTP\/1\.1 200/);
    expect(await gone(server!)).toBe(true);
    await run.exited;
    expect(run.output()).toMatch(/"msg":"closed"/);
    expect(run.output()).not.toMatch(/second SIGINT/);
  }, 120_000);
});

describe('the built server', () => {
  it('finishes a request in flight when told to stop, flushes, and starts again without a rebuild', async () => {
    const dataDir = freshDataDir();
    const first = launch(process.execPath, [join(dist, 'main.js')], { PORT: '0', DATA_DIR: dataDir });
    const port = await listening(first);
    const email = `drain-${Date.now()}@example.com`;
    const request = slowRequest(port, '/api/signup/email/', `email=${encodeURIComponent(email)}`);
    await request.sent;
    await new Promise((r) => setTimeout(r, 200));
    first.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(first.child.pid!)).toBe(true); // still draining: the request is not finished yet
    request.finish();
    const answer = await request.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.output()).toMatch(/"msg":"closed"/);

    // The sign-up step it acknowledged is kept, and the read models resume from their checkpoints.
    const second = launch(process.execPath, [join(dist, 'main.js')], { PORT: '0', DATA_DIR: dataDir });
    const again = await listening(second);
    expect(second.output()).not.toMatch(/rebuilding/);
    const password = await fetch(`http://127.0.0.1:${again}/api/signup/password/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}&password=secret-words` });
    expect(password.status).toBe(200);
    second.child.kill('SIGINT');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('exits within SHUTDOWN_GRACE_MS even when a request never finishes', async () => {
    const run = launch(process.execPath, [join(dist, 'main.js')], { PORT: '0', DATA_DIR: freshDataDir(), SHUTDOWN_GRACE_MS: '1000' });
    const port = await listening(run);
    const stuck = slowRequest(port, '/api/signup/email/', 'email=stuck%40example.com');
    await stuck.sent;
    // Let the server read the head first: a connection it has not read from yet is idle, and
    // closing it at once would be right (and prove nothing about the bound).
    await new Promise((r) => setTimeout(r, 500));
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    stuck.destroy();
    expect(code).toBe(1);
    expect(run.output()).toMatch(/killed by timeout \(1000ms\)/);
    expect(alive(run.child.pid!)).toBe(false);
  }, 60_000);

  it('names a configuration mistake in one line and exits 78, without a stack trace', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[join(dist, 'main.js')], { TZ_NAME: 'Mars/Olympus' }, /^castie: invalid configuration: TZ_NAME: Mars\/Olympus is not a time zone/],
      [[join(dist, 'main.js')], { PORT: 'eighty', LOG_LEVEL: 'loud' }, /^castie: invalid configuration: PORT: .*; LOG_LEVEL: /],
      [[join(dist, 'main.js')], { SHUTDOWN_GRACE_MS: '5' }, /^castie: invalid configuration: SHUTDOWN_GRACE_MS: /],
      [[join(dist, 'cluster.js')], {}, /^castie: usage: cluster\.js <identity\|groups\|casties\|social\|notifications\|gateway>/],
      [[join(dist, 'cluster.js'), 'groups'], { TZ_NAME: 'Nowhere/Atlantis' }, /^castie: invalid configuration: .*MONGO_URL: .*TZ_NAME: Nowhere\/Atlantis is not a time zone/],
    ];
    for (const [args, env, message] of cases) {
      const run = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, DATA_DIR: freshDataDir(), ...env }, encoding: 'utf8', timeout: 30_000 });
      expect(run.status, run.stderr).toBe(78);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it('says in one line that the port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const { port } = blocker.address() as { port: number };
    try {
      const run = spawnSync(process.execPath, [join(dist, 'main.js')], { cwd: root, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: freshDataDir(), LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 60_000 });
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toBe(`castie: port ${port} is in use: stop what holds it or set PORT`);
    } finally {
      blocker.close();
    }
  }, 90_000);
});
