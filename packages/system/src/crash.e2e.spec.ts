import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, freePort, killHard, stopAll } from './testing/processes.ts';

// The real server process (node running the embedded profile's entry, no wrapper between), killed
// with SIGKILL while people sign up, follow, befriend, create, forecast and comment; checked to be
// gone; started again on the same data directory. Every write it acknowledged must be there.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const main = join(root, 'packages/system/src/main.ts');
const ADMIN_TOKEN = 'crash-admin-token-0123456789';

const children: ChildProcess[] = [];

async function startServer(dataDir: string, port: number): Promise<ChildProcess> {
  // `node` itself runs the server (tsx as a loader), so the child's pid is the server's.
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SECRET: 'crash-test-secret-0123456789', ADMIN_TOKEN, TRUST_PROXY: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  for (let i = 0; i < 600; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/groups/`);
      if (res.status > 0) return child;
    } catch {
      if (child.exitCode !== null) throw new Error(`the server exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`the server did not answer: ${stderr}`);
}

afterAll(async () => {
  // No test leaves a process behind.
  await stopAll(children);
});

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

interface Person {
  email: string;
  password: string;
  handle: string;
  /** The client address this person uses (each comes from their own device). */
  from: string;
}

function client(port: number) {
  const call = async (method: string, path: string, options: { as?: Person; fields?: Record<string, string | string[]>; admin?: boolean; from?: string } = {}) => {
    const headers: Record<string, string> = { 'x-forwarded-for': options.from ?? options.as?.from ?? '10.0.0.1' };
    if (options.as) headers.authorization = `Basic ${Buffer.from(`${options.as.email}:${options.as.password}`).toString('base64')}`;
    if (options.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    let body: URLSearchParams | undefined;
    if (options.fields) {
      body = new URLSearchParams();
      for (const [k, v] of Object.entries(options.fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    }
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, ...(body ? { body } : {}) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return call;
}

async function signUp(call: ReturnType<typeof client>, p: Person): Promise<boolean> {
  const from = p.from;
  if ((await call('POST', '/api/signup/password/', { fields: { email: p.email, password: p.password }, from })).status !== 200) return false;
  if ((await call('POST', '/api/signup/handle/', { fields: { email: p.email, handle: p.handle, first_name: 'Crash', last_name: 'Test' }, from })).status !== 200) return false;
  return (await call('POST', '/api/signup/picture/', { fields: { email: p.email, handle: p.handle }, from })).status === 200;
}

describe('crash safety of the embedded profile', () => {
  it('keeps every acknowledged write across kill -9 of the real server: sign-ups, follows, frodad requests, Casties, forecasts, comments', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'castie-crash-'));
    dirs.push(dataDir);
    const port = await freePort();
    const first = await startServer(dataDir, port);
    let call = client(port);
    expect((await call('POST', '/admin/groups/', { admin: true, fields: { slug: 'crash', groupName: 'Crash', groupInfoText: 'x', requiresApproval: 'false', accessDeniedMessage: '' } })).status).toBe(200);

    // What the server acknowledged, by kind.
    const people = new Map<string, { person: Person; complete: boolean; started: boolean }>();
    const follows: Person[] = [];
    const requests: [Person, Person][] = [];
    const casties: [Person, string][] = [];
    const forecasts: [Person, string][] = [];
    const comments: [Person, string, string][] = [];
    const done = () => casties.length >= 6 && forecasts.length >= 10 && comments.length >= 6 && requests.length >= 4;

    let stop = false;
    const lane = async (laneId: number) => {
      let previous: Person | null = null;
      for (let i = 0; !stop; i++) {
        const person: Person = { email: `crash${laneId}x${i}@example.com`, password: `pw${laneId}x${i}`, handle: `crash${laneId}x${i}`, from: `10.1.${laneId}.${(i % 250) + 1}` };
        const entry = { person, complete: false, started: true };
        people.set(person.email, entry);
        try {
          if (!(await signUp(call, person))) return;
          entry.complete = true;
          if ((await call('POST', '/api/groups/crash/follow/', { as: person })).status !== 200) return;
          follows.push(person);
          if (previous) {
            if ((await call('POST', `/api/add-frodad/${previous.handle}/`, { as: person })).status !== 200) return;
            requests.push([person, previous]);
          }
          const created = await call('POST', '/api/casties/create/', { as: person, fields: { group_slug: 'crash', poll_type: 'Open', question: `Crash ${laneId}.${i}?`, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' } });
          if (created.status !== 200) return;
          const uuid = created.body.castie_uuid as string;
          casties.push([person, uuid]);
          for (const [, other] of casties.slice(-3)) {
            const options = (await call('GET', `/api/casties/${other}/answer/`, { as: person })).body.answer_options as Record<string, string> | undefined;
            const answer = Object.keys(options ?? {})[0];
            if (!answer) continue;
            if ((await call('POST', `/api/casties/${other}/forecast/`, { as: person, fields: { answer_id: answer } })).status === 200) forecasts.push([person, other]);
          }
          const commented = await call('POST', `/api/casties/${uuid}/comment/`, { as: person, fields: { commentText: `before the crash ${laneId}.${i}` } });
          if (commented.status === 200) comments.push([person, uuid, commented.body.commentUUID as string]);
          previous = person;
        } catch {
          return; // the server is gone
        }
      }
    };
    const lanes = Array.from({ length: 6 }, (_, i) => lane(i));
    // Kill while requests are in flight, once enough of every kind was acknowledged.
    while (!done()) await new Promise((r) => setTimeout(r, 20));
    await killHard(first);
    stop = true;
    await Promise.all(lanes);
    expect((await fetch(`http://127.0.0.1:${port}/api/groups/`).catch(() => null))?.status ?? null, 'nothing answers once the server is gone').toBeNull();

    const second = await startServer(dataDir, port);
    call = client(port);
    try {
      const complete = [...people.values()].filter((p) => p.complete).map((p) => p.person);
      expect(complete.length).toBeGreaterThanOrEqual(6);
      for (const p of complete) expect((await call('GET', '/api/preferences/', { as: p })).status, `${p.email} signs in`).toBe(200);
      for (const p of follows) expect((await call('GET', '/api/groups/crash/?casties=False', { as: p })).body.following, `${p.handle} follows`).toBe(true);
      for (const [from, to] of requests) {
        const sent = (await call('GET', '/api/frodad-requests/', { as: from })).body.requests_sent as { handle: string }[] | null;
        expect(sent?.map((r) => r.handle), `${from.handle} asked ${to.handle}`).toContain(to.handle);
      }
      for (const [p, uuid] of casties) expect((await call('GET', `/api/casties/${uuid}/`, { as: p })).status).toBe(200);
      for (const [p, uuid] of forecasts) expect(((await call('GET', `/api/casties/${uuid}/`, { as: p })).body.castie as { userForecast?: unknown }).userForecast, `${p.handle} forecast ${uuid}`).toBeDefined();
      for (const [p, uuid, commentId] of comments) {
        const listed = (await call('GET', `/api/casties/${uuid}/comments/`, { as: p })).body.comments as { commentUUID: string }[];
        expect(listed.map((c) => c.commentUUID)).toContain(commentId);
      }
      // Sign-ups cut short are consistent: their e-mail is free, or held by an account that the
      // incomplete endpoint cleans up, after which it is free again, or held by an account whose
      // last step was written but never answered: complete, its owner signs in.
      for (const { person } of [...people.values()].filter((p) => !p.complete)) {
        const check = await call('POST', '/api/signup/email/', { fields: { email: person.email }, from: person.from });
        if (check.status === 200) continue;
        expect(check.body.error_type).toBe('email_not_unique');
        const cleaned = await call('POST', '/api/signup/incomplete/', { fields: { email: person.email }, from: person.from });
        if (cleaned.status === 400 && cleaned.body.error_type === 'not_allowed') {
          expect((await call('GET', '/api/preferences/', { as: person })).status, `${person.email} completed its sign-up and signs in`).toBe(200);
          continue;
        }
        expect(cleaned.status).toBe(200);
        expect((await call('POST', '/api/signup/email/', { fields: { email: person.email }, from: person.from })).status).toBe(200);
      }
    } finally {
      const exited = once(second, 'exit');
      second.kill('SIGTERM');
      await exited;
      expect(alive(second.pid!)).toBe(false);
    }
  }, 180_000);
});
