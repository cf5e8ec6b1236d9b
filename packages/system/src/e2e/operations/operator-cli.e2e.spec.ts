import type { Collection, Collections, Doc, DocumentStore } from '@castie/platform';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../operator/cli.ts';
import { eventually, newUser, PNG, TestSystem, type TestUser } from '../../testing/harness.ts';

// What an operator does with `npm run castie -- …` against a running system: the embedded system
// listens on a real port and the CLI talks HTTP to it, as it would in production.

/** Writes to the casties service's copy of groups fail while set: a projection that breaks, then is fixed. */
let groupsCopyBroken = false;
const WRITES = new Set(['insertOne', 'insertMany', 'replaceOne', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany']);
function breakableGroupsCopy(store: DocumentStore): DocumentStore {
  // Projections write through their batch's unit of work: its collections break too.
  const transaction: DocumentStore['transaction'] = (fn, options) => store.transaction((unit) => fn(breakable(unit)), options);
  return new Proxy(breakable(store), {
    get(target, property, receiver) {
      return property === 'transaction' ? transaction : (Reflect.get(target, property, receiver) as unknown);
    },
  });
}
function breakable<S extends Collections>(collections: S): S {
  return new Proxy(collections, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown;
      return <T extends Doc>(spec: Parameters<DocumentStore['collection']>[0]) => {
        const collection = target.collection(spec) as unknown as Collection<T>;
        if (spec.name !== 'groups') return collection;
        return new Proxy(collection, {
          get(c, name, r) {
            const value = Reflect.get(c, name, r) as unknown;
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (groupsCopyBroken && WRITES.has(String(name))) throw new Error('disk full (simulated)');
              return (value as (...a: unknown[]) => unknown).apply(c, args);
            };
          },
        });
      };
    },
  });
}

let sys: TestSystem;
let url: string;
let workDir: string;

beforeAll(async () => {
  sys = await TestSystem.start({ wrapDocuments: (service, store) => (service === 'casties' ? breakableGroupsCopy(store) : store) });
  await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(sys.system.gateway.server.address() as AddressInfo).port}`;
  workDir = await mkdtemp(join(tmpdir(), 'castie-cli-'));
}, 30_000);
afterAll(async () => {
  await sys?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
}, 30_000);

/** Runs one CLI command as an operator would; what it printed and its exit code. */
async function castie(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await main(argv, {
    env: { CASTIE_URL: url, ADMIN_TOKEN: sys.adminToken, ...env },
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  return { code, out, err };
}

async function castieJson(argv: string[]): Promise<Record<string, unknown>> {
  const res = await castie([...argv, '--json']);
  expect(res.code, res.err).toBe(0);
  return JSON.parse(res.out) as Record<string, unknown>;
}

const loginAs = (u: TestUser) => sys.post('/api/login/', { last_seen_date: '2026-01-01', last_seen_time: '00:00:00' }, u);

describe('operator CLI', () => {
  it('creates a group with its icon, uploaded from a file, and shows it in a table', async () => {
    const icon = join(workDir, 'club.png');
    await writeFile(icon, PNG);
    const created = await castie(['groups', 'create', 'club', '--name', 'The Club', '--info', 'Members only', '--requires-approval', '--denied-message', 'Ask us', '--icon', icon]);
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^slug:\s+club$/m);
    expect(created.out).toMatch(/^requires approval:\s+yes$/m);

    const shown = (await castieJson(['groups', 'show', 'club'])).group as Record<string, unknown>;
    expect(shown.groupIcon).toMatch(/^\/media\//);
    const media = await fetch(`${url}${shown.groupIcon as string}`);
    expect(media.status).toBe(200);
    expect(Buffer.from(await media.arrayBuffer())).toEqual(PNG);

    const listed = await castie(['groups', 'list']);
    expect(listed.code).toBe(0);
    const [header, row] = listed.out.split('\n');
    expect(header).toMatch(/^SLUG\s+NAME\s+APPROVAL/);
    // Columns line up: each value starts where its title does.
    expect(row!.indexOf('The Club')).toBe(header!.indexOf('NAME'));
  });

  it('lists pending requests, grants one (the person now sees the group) and denies another (no longer pending)', async () => {
    const [ada, bob] = [await sys.signUp(newUser('ada')), await sys.signUp(newUser('bob'))];
    for (const u of [ada, bob]) expect((await sys.post('/api/groups/club/follow/', {}, u)).body.access).toBe('pending');

    const listed = await castie(['requests', 'list']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(new RegExp(`^club\\s+${ada.handle}\\s+Test User\\d+`, 'm'));
    expect(listed.out).toMatch(new RegExp(`^club\\s+${bob.handle}\\s`, 'm'));
    expect((await castieJson(['requests', 'list', '--group', 'club'])).number_requests).toBe(2);

    const granted = await castie(['requests', 'grant', 'club', ada.handle]);
    expect(granted.code, granted.err).toBe(0);
    expect(granted.out).toContain(`${ada.handle} has been approved`);
    const adaGroups = await sys.get('/api/groups/', ada);
    expect(adaGroups.body.groups).toMatchObject({ club: { access: 'granted', following: true } });

    const denied = await castie(['requests', 'deny', 'club', bob.handle]);
    expect(denied.code, denied.err).toBe(0);
    const bobGroups = await sys.get('/api/groups/', bob);
    expect(bobGroups.body.groups).toMatchObject({ club: { access: null, following: false } });

    const after = await castie(['requests', 'list', '--group', 'club']);
    expect(after.out).toBe('no pending requests for club\n');
  });

  it('adds a group admin who can then administer the group in the app, and a creator', async () => {
    const cat = await sys.signUp(newUser('cat'));
    expect((await sys.get('/api/groups/club/requests/', cat)).status).toBe(404);
    const added = await castie(['groups', 'add-admin', 'club', cat.handle]);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toMatch(new RegExp(`^admins:\\s+${cat.handle}$`, 'm'));
    expect((await sys.get('/api/groups/club/requests/', cat)).status).toBe(200);

    const creator = await castieJson(['groups', 'add-creator', 'club', cat.handle]);
    expect((creator.group as { creators: string[] }).creators).toEqual([cat.handle]);
  });

  it('configures a group: new name, icon and approval off; members see them and the waiting person is let in', async () => {
    const [ivy, jon] = [await sys.signUp(newUser('ivy')), await sys.signUp(newUser('jon'))];
    expect((await castie(['groups', 'create', 'lounge', '--name', 'Lounge', '--requires-approval'])).code).toBe(0);
    await sys.post('/api/groups/lounge/follow/', {}, ivy);
    await sys.admin('POST', `/admin/groups/lounge/access/${ivy.handle}/grant/`);
    expect((await sys.post('/api/groups/lounge/follow/', {}, jon)).body.access).toBe('pending');
    const icon = join(workDir, 'lounge.gif');
    await writeFile(icon, Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));

    const configured = await castie(['groups', 'configure', 'lounge', '--name', 'The Lounge', '--info', 'Come in', '--icon', icon, '--approval', 'off']);
    expect(configured.code, configured.err).toBe(0);
    expect(configured.out).toMatch(/^name:\s+The Lounge$/m);
    expect(configured.out).toMatch(/^requires approval:\s+no$/m);
    expect(configured.out).toContain('changed: groupName, groupInfoText, groupIcon, requiresApproval');
    expect(configured.out).toContain(`granted the pending requests of: ${jon.handle}`);

    const seen = (await sys.get('/api/groups/', jon)).body.groups as Record<string, { groupName: string; groupIcon: string; following: boolean }>;
    expect(seen.lounge).toMatchObject({ groupName: 'The Lounge', following: true });
    const media = await fetch(`${url}${seen.lounge!.groupIcon}`);
    expect(media.headers.get('content-type')).toBe('image/gif');

    const again = await castie(['groups', 'configure', 'lounge', '--name', 'The Lounge']);
    expect(again).toMatchObject({ code: 1, err: 'castie: nothing has changed- no data to update (400 invalid_request)\n' });
    expect(await castie(['groups', 'configure', 'lounge'])).toMatchObject({ code: 2, err: expect.stringMatching(/^castie: nothing to configure: give at least one of --name/) });
    expect(await castie(['groups', 'configure', 'lounge', '--approval', 'maybe'])).toMatchObject({ code: 2, err: 'castie: --approval takes on or off, not maybe\n' });
    expect(await castie(['groups', 'configure', 'nope', '--restricted', 'on'])).toMatchObject({ code: 1, err: 'castie: the requested group could not be found (404 object_not_found)\n' });
  });

  it('creates an account for support with a generated password, printed once, that signs in', async () => {
    const person = newUser('dee');
    const created = await castie(['accounts', 'create', '--email', person.email, '--handle', person.handle, '--first-name', 'Dee', '--last-name', 'Dee']);
    expect(created.code, created.err).toBe(0);
    const password = /^password:\s+(\S+)$/m.exec(created.out)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    const login = await loginAs({ ...person, password: password! });
    expect(login.status, login.text).toBe(200);
    expect(login.body.profile_handle).toBe(person.handle);

    // The sign-up rules hold: the e-mail is taken now, and so is the handle.
    const again = await castie(['accounts', 'create', '--email', person.email, '--handle', 'someoneelse', '--first-name', 'A', '--last-name', 'B', '--password', 'secret1']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^castie: .*already associated.*\(400 email_not_unique\)\n$/);
    const other = newUser('eve');
    const sameHandle = await castie(['accounts', 'create', '--email', other.email, '--handle', person.handle, '--first-name', 'A', '--last-name', 'B', '--password', 'secret1']);
    expect(sameHandle.err).toContain('handle_not_unique');
    // The refused sign-up did not keep the e-mail: it can be used with a free handle.
    const retry = await castie(['accounts', 'create', '--email', other.email, '--handle', other.handle, '--first-name', 'A', '--last-name', 'B', '--password', 'secret1']);
    expect(retry.code, retry.err).toBe(0);
    expect((await loginAs({ ...other, password: 'secret1' })).status).toBe(200);
  });

  it('lists a poison event as a dead letter, and replays it once the cause is fixed', async () => {
    const fan = await sys.signUp(newUser('fan'));
    groupsCopyBroken = true;
    try {
      expect((await castie(['groups', 'create', 'poison', '--name', 'Poison'])).code).toBe(0);
      // The casties service's copy of the group failed: it does not know the group.
      const listed = await eventually(async () => {
        const res = await castie(['dead-letters', 'list']);
        expect(res.out).toContain('GroupCreated');
        return res;
      });
      expect(listed.out).toMatch(/^casties\s+groups:0:\d+\s+GroupCreated\s+groups\s+pending\s+.*disk full \(simulated\)/m);
    } finally {
      groupsCopyBroken = false;
    }
    await sys.post('/api/groups/poison/follow/', {}, fan);
    expect((await sys.get('/api/groups/poison/', fan)).status).toBe(404);

    const letters = (await castieJson(['dead-letters', 'list', 'casties'])).dead_letters as { id: string }[];
    expect(letters).toHaveLength(1);
    const replayed = await castie(['dead-letters', 'replay', 'casties', letters[0]!.id]);
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toContain(`the event ${letters[0]!.id} was applied again by groups`);
    expect((await sys.get('/api/groups/poison/?casties=False', fan)).status).toBe(200);

    expect((await castie(['dead-letters', 'list', 'casties'])).out).toBe('no pending dead letters\n');
    expect((await castie(['dead-letters', 'list', 'casties', '--all'])).out).toMatch(/\sreplayed\s/);
    const twice = await castie(['dead-letters', 'replay', 'casties', letters[0]!.id]);
    expect(twice.code).toBe(1);
    expect(twice.err).toMatch(/already replayed/);
  });

  it('rebuilds a service’s read models while the system runs, leaving every answer as it was', async () => {
    const [gil, hal] = [await sys.signUp(newUser('gil')), await sys.signUp(newUser('hal'))];
    expect((await castie(['groups', 'create', 'weather', '--name', 'Weather'])).code).toBe(0);
    for (const u of [gil, hal]) await sys.post('/api/groups/weather/follow/', {}, u);
    await sys.post(`/api/add-frodad/${hal.handle}/`, {}, gil);
    await sys.post(`/api/frodad-requests/${gil.handle}/accept/`, {}, hal);
    const created = await sys.post('/api/casties/create/', { group_slug: 'weather', poll_type: 'Open', question: 'Sun tomorrow?', answer_type: 'Write-in answers', display_created_by: 'true' }, gil);
    expect(created.status, created.text).toBe(200);
    await sys.post(`/api/casties/${created.body.castie_uuid as string}/forecast/`, { forecast_text: 'yes' }, hal);

    const ask = async () => {
      const out: Record<string, unknown> = {};
      for (const u of [gil, hal]) {
        for (const path of ['/api/home/spicy/', '/api/groups/', '/api/groups/weather/', `/api/casties/${created.body.castie_uuid as string}/`, `/api/profile/${u.handle}/frodads/`, '/api/initialize/', '/api/leaderboard/']) {
          const res = await sys.get(path, u);
          out[`${u.handle} ${path}`] = { status: res.status, body: res.body };
        }
      }
      return out;
    };
    // Other people's writes reach a reader's answers when each service applied them: wait until
    // gil sees hal's forecast and two rounds of answers agree.
    const before = await eventually(async () => {
      const seen = await ask();
      expect(seen[`${hal.handle} /api/home/spicy/`]).toMatchObject({ status: 200 });
      expect(JSON.stringify(seen[`${gil.handle} /api/casties/${created.body.castie_uuid as string}/`])).toContain('"forecastsCount":1');
      expect(await ask()).toEqual(seen);
      return seen;
    });

    for (const service of ['casties', 'groups', 'social', 'notifications']) {
      const rebuilt = await castie(['read-models', 'rebuild', service]);
      expect(rebuilt.code, rebuilt.err).toBe(0);
      expect(rebuilt.out).toMatch(new RegExp(`the ${service} read models were rebuilt from \\d+ events`));
    }
    expect(await ask()).toEqual(before);

    const identity = await castie(['read-models', 'rebuild', 'identity']);
    expect(identity.code).toBe(2);
    expect(identity.err).toBe('castie: identity keeps no read models (it answers from its event streams): choose one of groups, casties, social, notifications\n');
  });

  it('answers a person’s mistakes with one line and a non-zero exit code', async () => {
    const wrongToken = await castie(['groups', 'list'], { ADMIN_TOKEN: 'not-the-token' });
    expect(wrongToken).toEqual({ code: 1, out: '', err: `castie: the admin API at ${url} refused the token (401): check ADMIN_TOKEN\n` });

    let err = '';
    const noToken = await main(['groups', 'list'], { env: { CASTIE_URL: url }, stdout: { write: () => true }, stderr: { write: (t: string) => (err += t) } });
    expect(noToken).toBe(2);
    expect(err).toMatch(/^castie: ADMIN_TOKEN is not set[^\n]*\n$/);

    const unreachable = await castie(['groups', 'list'], { CASTIE_URL: 'http://127.0.0.1:1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toMatch(/^castie: cannot reach the admin API at http:\/\/127\.0\.0\.1:1 [^\n]*\n$/);

    const unknownGroup = await castie(['groups', 'add-admin', 'nope', 'someone']);
    expect(unknownGroup).toMatchObject({ code: 1, err: 'castie: the requested group could not be found (404 object_not_found)\n' });

    const missingArg = await castie(['requests', 'grant', 'club']);
    expect(missingArg.code).toBe(2);
    expect(missingArg.err).toBe('castie: missing <handle>; usage: castie requests grant <slug> <handle>\n');

    const unknownOption = await castie(['groups', 'list', '--colour']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.err.split('\n')).toHaveLength(2);

    const missingIcon = await castie(['groups', 'create', 'pics', '--name', 'Pics', '--icon', join(workDir, 'nothing.png')]);
    expect(missingIcon).toMatchObject({ code: 2, err: `castie: cannot read the icon file ${join(workDir, 'nothing.png')} (ENOENT)\n` });

    for (const res of [wrongToken, unreachable, unknownGroup, missingArg, unknownOption]) expect(res.err).not.toMatch(/\n\s+at /);
  });

  it('explains every command with --help', async () => {
    const all = await castie(['--help']);
    expect(all.code).toBe(0);
    for (const name of ['groups create', 'groups configure', 'requests deny', 'accounts create', 'read-models rebuild', 'dead-letters replay']) expect(all.out).toContain(name);
    const one = await castie(['dead-letters', 'replay', '--help'], { ADMIN_TOKEN: '' });
    expect(one.code).toBe(0);
    expect(one.out).toMatch(/^usage: castie dead-letters replay <service> <id>/);
    expect(one.out).toContain('examples:');
  });

  it('runs as a process (what npm run castie starts): exit codes and output as a person sees them', async () => {
    const cli = fileURLToPath(new URL('../../operator/cli.ts', import.meta.url));
    const run = (args: string[], token: string) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { env: { ...process.env, CASTIE_URL: url, ADMIN_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, out, err }));
      });
    const listed = await run(['groups', 'list'], sys.adminToken);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/^SLUG\s+NAME/);
    const refused = await run(['groups', 'list'], 'wrong-token');
    expect(refused).toEqual({ code: 1, out: '', err: `castie: the admin API at ${url} refused the token (401): check ADMIN_TOKEN\n` });
  }, 30_000);
});
