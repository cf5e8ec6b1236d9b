import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The real embedded process (`npm start`'s entry), killed with SIGKILL during a burst of
// sign-ups, then started again on the same data directory.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const main = join(root, 'packages/system/src/main.ts');
const tsx = join(root, 'node_modules/.bin/tsx');

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

async function startProcess(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(tsx, [main], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SECRET: 'crash-test-secret-0123456789' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/groups/`);
      if (res.status > 0) return child;
    } catch {
      if (child.exitCode !== null) throw new Error(`the process exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`the process did not answer: ${stderr}`);
}

const post = async (port: number, path: string, fields: Record<string, string>) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('crash safety of the embedded profile', () => {
  it('keeps every acknowledged sign-up across kill -9, and nothing half-written', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'castie-crash-'));
    dirs.push(dataDir);
    const port = await freePort();
    const first = await startProcess(dataDir, port);

    // Sign-ups run in parallel lanes; a lane records the steps the server acknowledged.
    const acknowledged = new Map<string, { password: string; handle: string; steps: number }>();
    let stop = false;
    const lane = async (laneId: number) => {
      for (let i = 0; !stop; i++) {
        const email = `crash${laneId}x${i}@example.com`;
        const user = { password: `pw${laneId}x${i}`, handle: `crash${laneId}x${i}`, steps: 0 };
        acknowledged.set(email, user);
        try {
          if ((await post(port, '/api/signup/password/', { email, password: user.password })).status !== 200) break;
          user.steps = 1;
          if ((await post(port, '/api/signup/handle/', { email, handle: user.handle, first_name: 'Crash', last_name: 'Test' })).status !== 200) break;
          user.steps = 2;
          if ((await post(port, '/api/signup/picture/', { email, handle: user.handle })).status !== 200) break;
          user.steps = 3;
        } catch {
          return; // the process is gone
        }
      }
    };
    const lanes = Array.from({ length: 8 }, (_, i) => lane(i));
    // Kill while requests are in flight, once enough accounts are complete.
    while ([...acknowledged.values()].filter((u) => u.steps === 3).length < 30) await new Promise((r) => setTimeout(r, 20));
    first.kill('SIGKILL');
    stop = true;
    await Promise.all(lanes);

    const second = await startProcess(dataDir, port);
    try {
      const complete = [...acknowledged.entries()].filter(([, u]) => u.steps === 3);
      expect(complete.length).toBeGreaterThanOrEqual(30);
      for (const [email, user] of complete) {
        const res = await fetch(`http://127.0.0.1:${port}/api/preferences/`, { headers: { authorization: `Basic ${Buffer.from(`${email}:${user.password}`).toString('base64')}` } });
        expect(res.status, `${email} was acknowledged and must still sign in`).toBe(200);
      }
      // Sign-ups cut short are consistent: their e-mail is either free, or taken by an account
      // that the incomplete endpoint can clean up, after which it is free again.
      for (const [email, user] of [...acknowledged.entries()].filter(([, u]) => u.steps < 3)) {
        const check = await post(port, '/api/signup/email/', { email });
        if (check.status === 200) continue;
        expect(check.body.error_type).toBe('email_not_unique');
        if (user.steps >= 1) {
          expect((await post(port, '/api/signup/incomplete/', { email })).status).toBe(200);
          expect((await post(port, '/api/signup/email/', { email })).status).toBe(200);
        }
      }
    } finally {
      second.kill('SIGTERM');
    }
  }, 120_000);
});
