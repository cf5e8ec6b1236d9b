import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionsThread } from '../../projections-thread/host.ts';
import { capturedLogger, eventually, TestSystem, type TestUser } from '../../testing/harness.ts';

// The services' projections run in a thread of their own once caught up at start
// (system/src/projections-thread): the requests read what it commits, and if it ends, the
// projections go on on the event loop from their last commit.

let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;
let cleo: TestUser;

/** Three people following one group. */
async function people(on: TestSystem): Promise<[TestUser, TestUser, TestUser]> {
  const three: [TestUser, TestUser, TestUser] = [await on.signUp(), await on.signUp(), await on.signUp()];
  expect((await on.admin('POST', '/admin/groups/', { slug: 'tides', groupName: 'Tides', groupInfoText: 'high or low', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  for (const u of three) expect((await on.post('/api/groups/tides/follow/', {}, u)).status).toBe(200);
  return three;
}

/** Systems a test started on its own, closed at the end. */
const others: TestSystem[] = [];
beforeAll(async () => {
  sys = await TestSystem.start();
  [ada, bob, cleo] = await people(sys);
}, 30_000);
afterAll(async () => {
  for (const other of others) await other.close().catch(() => undefined);
  await sys?.close();
}, 60_000);

/** Ends the thread and waits until it is gone. */
async function endThread(on: TestSystem): Promise<void> {
  const worker = on.system.projectionsThread!.worker!;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  await worker.terminate();
  expect(await exited).toBe(1);
}

/** A new Castie of Ada's, once Cleo can read it, and the id of its first answer option. */
async function castie(question: string, on = sys, [author, reader] = [ada, cleo]): Promise<{ uuid: string; yes: string }> {
  const created = await on.post(
    '/api/casties/create/',
    { group_slug: 'tides', poll_type: 'Regular', closes_on_date: '2026-03-09', closes_on_time: '08:00', question, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'True' },
    author,
  );
  expect(created.body).toMatchObject({ status: 200 });
  const uuid = created.body.castie_uuid as string;
  const options = (await on.get(`/api/casties/${uuid}/answer/`, author)).body.answer_options as Record<string, string>;
  await eventually(async () => expect((await on.get(`/api/casties/${uuid}/`, reader)).status).toBe(200));
  return { uuid, yes: Object.entries(options).find(([, text]) => text === 'Yes')![0] };
}

const forecastsSeenBy = async (user: TestUser, uuid: string, on = sys) => ((await on.get(`/api/casties/${uuid}/`, user)).body.castie as { forecastsCount: number }).forecastsCount;

describe("the services' projections, in a thread of their own", () => {
  it('show a reader who read a Castie before the forecasts others place on it, and its author at once', async () => {
    expect(sys.system.projectionsThread?.worker).toBeTruthy();
    const { uuid, yes } = await castie('High tide at noon?');
    // Read (and kept by the casties service) before anyone forecast.
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);

    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, bob)).status).toBe(200);
    await eventually(async () => expect(await forecastsSeenBy(cleo, uuid)).toBe(1));
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, ada)).status).toBe(200);
    expect(await forecastsSeenBy(ada, uuid)).toBe(2);
  });

  it('once the thread ended, go on on the event loop from their last commit', async () => {
    await endThread(sys);

    const { uuid, yes } = await castie('Low tide at dusk?');
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, bob)).status).toBe(200);
    await eventually(async () => expect(await forecastsSeenBy(cleo, uuid)).toBe(1));
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, ada)).status).toBe(200);
    expect(await forecastsSeenBy(ada, uuid)).toBe(2);
    // Every service is ready, and an operator's rebuild works as before.
    const ready = await sys.request('GET', '/readyz');
    expect(ready.status, ready.text).toBe(200);
    const rebuilt = await sys.admin('POST', '/admin/read-models/casties/rebuild/');
    expect(rebuilt.status, rebuilt.text).toBe(200);
    expect(await forecastsSeenBy(cleo, uuid)).toBe(2);
  });

  it('once the thread ended between a commit and its answer, have applied that batch once', async () => {
    const first = await TestSystem.start();
    others.push(first);
    const [author, forecaster, reader] = await people(first);
    const { uuid, yes } = await castie('Spring tide?', first, [author, reader]);
    const now = first.clock.now();
    await first.stop();
    // Started again: what the casties service cached at start (its checkpoints among them) is all it knows of the file.
    const again = await TestSystem.start({ dataDir: first.dataDir, now });
    others.push(again);
    expect(await forecastsSeenBy(reader, uuid, again)).toBe(0);
    // The thread commits the forecast's batch, and ends before the main thread hears of it.
    const worker = again.system.projectionsThread!.worker!;
    const batches = new Set<number>();
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (message: { type: string; id: number; group: string }) => {
      if (message.type === 'batch' && message.group === 'casties-read') batches.add(message.id);
      post(message);
    };
    const listeners = worker.listeners('message') as ((message: unknown) => void)[];
    worker.removeAllListeners('message');
    let ended = false;
    worker.on('message', (message: { type: string; id: number }) => {
      if (!ended && message.type === 'reply' && batches.has(message.id)) {
        ended = true;
        void worker.terminate();
        return;
      }
      for (const listener of listeners) listener(message);
    });
    expect((await again.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, forecaster)).status).toBe(200);
    await eventually(async () => expect(ended).toBe(true));
    await eventually(async () => expect(await forecastsSeenBy(reader, uuid, again)).toBe(1));
    const db = new Database(join(again.dataDir, 'read-models', 'casties.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT doc FROM castie_views WHERE id = ?').get(uuid) as { doc: string };
      expect((JSON.parse(row.doc) as { forecastsCount: number }).forecastsCount).toBe(1);
    } finally {
      db.close();
    }
  });

  it('start even when the thread ends while a service is handed over', async () => {
    const request = ProjectionsThread.prototype.request;
    let armed = true;
    ProjectionsThread.prototype.request = function (this: ProjectionsThread, message) {
      const answer = request.call(this, message);
      if (armed && message.type === 'serve') {
        armed = false;
        void this.worker!.terminate();
      }
      return answer;
    };
    try {
      const started = await TestSystem.start();
      others.push(started);
      expect(started.system.projectionsThread!.failed).toBe(true);
      const ready = await started.request('GET', '/readyz');
      expect(ready.status, ready.text).toBe(200);
      const [author, forecaster, reader] = await people(started);
      const { uuid, yes } = await castie('Neap tide?', started, [author, reader]);
      expect((await started.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, forecaster)).status).toBe(200);
      await eventually(async () => expect(await forecastsSeenBy(reader, uuid, started)).toBe(1));
    } finally {
      ProjectionsThread.prototype.request = request;
    }
  });

  it('once handed over, still offer people and groups to copy: a new version of them is built once, not per service', async () => {
    const first = await TestSystem.start();
    others.push(first);
    await people(first);
    await first.stop();
    const dir = join(first.dataDir, 'read-models');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.db'))) {
      const db = new Database(join(dir, file));
      try {
        if (db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'projection_versions'`).get()) db.prepare(`UPDATE projection_versions SET doc = json_set(doc, '$.version', 0) WHERE id = 'people'`).run();
      } finally {
        db.close();
      }
    }
    const log = capturedLogger();
    const again = await TestSystem.start({ dataDir: first.dataDir, logger: log.logger });
    others.push(again);
    const lines = log.lines().map((l) => String(l.msg));
    expect(lines.filter((m) => /rebuilding people/.test(m))).toHaveLength(1);
    expect(lines.filter((m) => /copied people/.test(m)).length).toBeGreaterThanOrEqual(2);
  });
});
