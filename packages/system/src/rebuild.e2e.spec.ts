import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogger, eventually, TestSystem, type TestUser } from './testing/harness.ts';

// Rule 7: read models can always be rebuilt from the log, to the same state. A story through
// every service, then the same questions asked of a fresh process: one that resumed from its
// read-model files, one that rebuilt them all, one that rebuilt one service, one that rebuilt one
// projection whose version changed.
const systems: TestSystem[] = [];
afterAll(async () => {
  // A data directory is shared by the processes of one test: remove it once, after the last.
  const last = new Map(systems.map((s) => [s.dataDir, s]));
  for (const s of systems) await s.close({ keepData: last.get(s.dataDir) !== s });
}, 60_000);

async function story(sys: TestSystem) {
  const [ada, bob, cyd] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
  await sys.post('/api/preferences/', { is_private: 'true' }, cyd);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'weather', groupName: 'Weather', groupInfoText: 'Rain or shine', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'club', groupName: 'Club', groupInfoText: 'Members only', requiresApproval: true, accessDeniedMessage: 'Ask us' })).status).toBe(200);
  for (const u of [ada, bob, cyd]) await sys.post('/api/groups/weather/follow/', {}, u);
  await sys.post('/api/groups/club/follow/', {}, bob);
  await sys.admin('POST', `/admin/groups/club/access/${bob.handle}/grant/`);
  await sys.post(`/api/add-frodad/${bob.handle}/`, {}, ada);
  await sys.post(`/api/frodad-requests/${ada.handle}/accept/`, {}, bob);
  await sys.post(`/api/add-frodad/${cyd.handle}/`, {}, ada);

  const end = new Date(sys.clock.now().getTime() + 3600_000);
  const created = await sys.post(
    '/api/casties/create/',
    { group_slug: 'weather', poll_type: 'Regular', closes_on_date: end.toISOString().slice(0, 10), closes_on_time: end.toISOString().slice(11, 16), question: 'Rain on Sunday?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' },
    ada,
  );
  expect(created.status, created.text).toBe(200);
  const uuid = created.body.castie_uuid as string;
  const writeIn = await sys.post('/api/casties/create/', { group_slug: 'weather', poll_type: 'Open', question: 'Top temperature in July?', answer_type: 'Write-in answers', display_created_by: 'false' }, bob);
  const options = Object.keys((await sys.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as object).map(Number);
  await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(options[0]) }, bob)).status).toBe(200));
  await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(options[1]) }, cyd)).status).toBe(200));
  await sys.post(`/api/casties/${writeIn.body.castie_uuid as string}/forecast/`, { forecast_text: 'about 35 degrees' }, ada);
  await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'Looks cloudy' }, bob);
  sys.clock.advance(2 * 3600);
  expect((await sys.post(`/api/casties/${uuid}/answer/`, { answer_id: String(options[0]) }, ada)).status).toBe(200);
  return { users: [ada, bob, cyd], uuid };
}

/** What people see, asked of every service. No endpoint here writes. */
async function snapshot(sys: TestSystem, users: TestUser[], uuid: string) {
  const out: Record<string, unknown> = {};
  for (const u of users) {
    for (const url of [
      '/api/home/spicy/',
      '/api/home/following/',
      '/api/home/new/',
      `/api/casties/${uuid}/`,
      `/api/casties/${uuid}/comments/`,
      '/api/groups/',
      '/api/groups/weather/',
      '/api/groups/club/?casties=False',
      '/api/groups/weather/followers/',
      '/api/leaderboard/',
      '/api/leaderboard/weather/',
      '/api/frodad-requests/',
      '/api/initialize/',
      '/api/hamburger/',
      '/api/search/people/?q=user',
      ...users.flatMap((p) => [`/api/profile/${p.handle}/stats/`, `/api/profile/${p.handle}/mycasties/`, `/api/profile/${p.handle}/groups/`, `/api/profile/${p.handle}/frodads/`]),
    ]) {
      const res = await sys.get(url, u);
      out[`${u.handle} GET ${url}`] = { status: res.status, body: res.body };
    }
  }
  return out;
}

/** The story, and what it looks like once every service's copy reached the end of the log. */
async function told(): Promise<{ first: TestSystem; users: TestUser[]; uuid: string; before: Record<string, unknown> }> {
  const first = await TestSystem.start();
  systems.push(first);
  const { users, uuid } = await story(first);
  const before = await eventually(async () => {
    const a = await snapshot(first, users, uuid);
    expect(await snapshot(first, users, uuid)).toEqual(a);
    return a;
  });
  expect(Object.values(before).every((r) => (r as { status: number }).status === 200)).toBe(true);
  return { first, users, uuid, before };
}

/** Stops a system, lets `change` work on its data directory, and starts a fresh process on it. */
async function restart(sys: TestSystem, change: (readModels: string) => void | Promise<void> = () => {}): Promise<TestSystem> {
  const now = sys.clock.now();
  await sys.stop();
  await change(join(sys.dataDir, 'read-models'));
  const next = await TestSystem.start({ dataDir: sys.dataDir, now });
  systems.push(next);
  return next;
}

const removeDatabase = (dir: string, service: string) => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `${service}.db${suffix}`), { force: true });
};

describe('read models across restarts (rules 7 and the read-side issue)', () => {
  it('a restart resumes from the kept read models and answers the same', async () => {
    const { first, users, uuid, before } = await told();
    const files = readdirSync(join(first.dataDir, 'read-models')).filter((f) => f.endsWith('.db')).sort();
    expect(files).toEqual(['casties.db', 'groups.db', 'identity.db', 'notifications.db', 'social.db']);
    // A file a thread of an earlier start was building when it was killed, beside kept ones: removed, never used.
    const second = await restart(first, (dir) => writeFileSync(join(dir, 'casties.db.partial'), 'left by a start killed midway'));
    expect(await snapshot(second, users, uuid)).toEqual(before);
    expect(readdirSync(join(second.dataDir, 'read-models')).filter((f) => f.includes('.partial'))).toEqual([]);
  });

  it('a fresh process with no read models rebuilds every one from the log to the same answers', async () => {
    const { first, users, uuid, before } = await told();
    const second = await restart(first, (dir) => rmSync(dir, { recursive: true, force: true }));
    expect(await snapshot(second, users, uuid)).toEqual(before);
  });

  it.each([2, 3])('a fresh process on a long history builds the read models and stream indexes in %i threads, side by side, to the same answers', async (workers) => {
    const { first, users, uuid, before } = await told();
    const now = first.clock.now();
    await first.stop();
    rmSync(join(first.dataDir, 'read-models'), { recursive: true, force: true });
    // What a first start killed while its threads built leaves: their files under the names they
    // are built under, moved into place only once closed.
    mkdirSync(join(first.dataDir, 'read-models'));
    writeFileSync(join(first.dataDir, 'read-models', 'casties.db.partial'), 'left by a start killed midway');
    writeFileSync(join(first.dataDir, 'read-models', 'groups.db.partial-journal'), 'left by a start killed midway');
    // The event stores' stream indexes are derived from the log too: the threads build them last.
    const indexes = readdirSync(join(first.dataDir, 'log')).filter((f) => f.endsWith('.streams.db'));
    expect(indexes.sort()).toEqual(['casties.streams.db', 'groups.streams.db', 'identity-logins.streams.db', 'identity.streams.db', 'notifications.streams.db', 'social.streams.db']);
    for (const f of indexes) rmSync(join(first.dataDir, 'log', f));
    const log = capturedLogger();
    // Any history counts as long here. Two threads, as on the smallest machine that uses them;
    // three, where notifications starts while groups builds what they share.
    const second = await TestSystem.start({ dataDir: first.dataDir, now, logger: log.logger, parallelRebuild: { workers, minEvents: 0 } });
    systems.push(second);
    expect(await snapshot(second, users, uuid)).toEqual(before);
    // Each file moved into place, nothing left under another name.
    const made = readdirSync(join(second.dataDir, 'read-models'));
    expect(made.filter((f) => f.endsWith('.db')).sort()).toEqual(['casties.db', 'groups.db', 'identity.db', 'notifications.db', 'social.db']);
    expect(made.filter((f) => f.includes('.partial'))).toEqual([]);
    const built = log.lines().filter((l) => typeof l.thread === 'string' && / rebuilt | copied | started as a copy /.test(String(l.msg)));
    // Every service with read models was built by a thread of its own, none by its service at start.
    expect(new Set(built.map((l) => l.thread))).toEqual(new Set(['groups', 'casties', 'social', 'notifications']));
    expect(log.lines().filter((l) => l.thread === undefined && / rebuilt | copied | started as a copy /.test(String(l.msg)))).toEqual([]);
    // People, friendships and groups are built once, by the groups thread: another thread gets
    // them from its file, whole (it started once groups was done) or table by table.
    const sharedBy = (thread: string, names: string[]): 'file' | 'tables' => {
      const lines = built.filter((l) => l.thread === thread && / copied | started as a copy /.test(String(l.msg))).map((l) => String(l.msg).replace(/ v\d+/g, '').split(' from ')[0]);
      if (lines.length === 1 && lines[0] === `${thread}-read: started as a copy of the file of groups-read (${names.join(', ')})`) return 'file';
      expect(lines).toEqual(names.map((name) => `${thread}-read: copied ${name}`));
      return 'tables';
    };
    // The casties thread, started beside groups, builds only its own read models from the log,
    // then its boards from the shared ones. On a history this short groups may be done before it
    // first looks (three threads): then it starts as a copy of that file.
    const casties = built.filter((l) => l.thread === 'casties').map((l) => String(l.msg));
    expect(casties.filter((m) => m.includes(' rebuilt '))).toEqual([expect.stringMatching(/^casties-read: rebuilt castie-views v\d+, forecasts v\d+, comments v\d+, castie-search v\d+ from /)]);
    expect(['file', 'tables']).toContain(sharedBy('casties', ['people', 'friendships', 'groups']));
    expect(log.lines().some((l) => l.thread === 'casties' && String(l.msg).startsWith('casties-read: built leaderboards v'))).toBe(true);
    // A thread started once groups finished starts as a copy of its whole file: social (people and
    // friendships, less the groups it does not keep) always, as it is taken by the first thread
    // free, the groups one; notifications on two threads, taken after groups too.
    expect(sharedBy('social', ['people', 'friendships'])).toBe('file');
    const notifications = sharedBy('notifications', ['people', 'friendships', 'groups']);
    if (workers === 2) expect(notifications).toBe('file');
    const social = new Database(join(second.dataDir, 'read-models', 'social.db'), { readonly: true });
    try {
      expect(social.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'groups'`).all()).toEqual([]);
      expect(social.prepare(`SELECT id FROM projection_versions ORDER BY id`).pluck().all()).toEqual(['friendships', 'people']);
    } finally {
      social.close();
    }
    // Social only copies what groups builds: it is taken last, so the threads that build from the log start first.
    expect(log.lines().find((l) => String(l.msg).startsWith('building the read models of '))?.services).toEqual(['groups', 'casties', 'notifications', 'social']);
    // Each stream index was built by a thread, none by its event store at start.
    // (Of a topic with events: an empty one's index is made empty by its store, at once.)
    const topics = indexes.map((f) => f.replace('.streams.db', '')).filter((topic) => statSync(join(second.dataDir, 'log', `${topic}.log`)).size > 0);
    expect(topics.length).toBeGreaterThanOrEqual(5);
    const indexed = log.lines().filter((l) => / indexed the streams of /.test(String(l.msg)));
    expect(indexed.map((l) => l.thread).sort()).toEqual(topics.sort());
    expect(log.lines().filter((l) => l.thread === undefined && / indexed /.test(String(l.msg)))).toEqual([]);
  });

  it("dropping one service's database file rebuilds that service alone, to the same answers", async () => {
    const { first, users, uuid, before } = await told();
    let kept = 0;
    const second = await restart(first, (dir) => {
      removeDatabase(dir, 'casties');
      kept = statSync(join(dir, 'notifications.db')).ino;
    });
    expect(await snapshot(second, users, uuid)).toEqual(before);
    expect(statSync(join(second.dataDir, 'read-models', 'notifications.db')).ino).toBe(kept);
  });

  it('a projection whose version changed is rebuilt at start, repairing what it holds', async () => {
    const { first, users, uuid, before } = await told();
    const second = await restart(first, (dir) => {
      const db = new Database(join(dir, 'casties.db'));
      try {
        // As if the code of castie-views had a new version, and its documents were wrong.
        db.prepare(`UPDATE projection_versions SET doc = json_set(doc, '$.version', 0) WHERE id = 'castie-views'`).run();
        const damaged = db.prepare(`UPDATE castie_views SET doc = json_set(doc, '$.question', 'damaged'), "$activityAt" = '1970-01-01T00:00:00.000Z'`).run();
        expect(damaged.changes).toBeGreaterThan(0);
      } finally {
        db.close();
      }
    });
    expect(await snapshot(second, users, uuid)).toEqual(before);
  });
});
