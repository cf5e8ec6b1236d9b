import { defineEventCatalog, ErrorBodySchema, HealthSchema, internalHeaders, ReadinessSchema, readModelsAdminApi } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { createLogEventStore } from '../embedded/log-event-store.ts';
import { collectionSpec, type Doc } from '../ports/document-store.ts';
import type { EventStore } from '../ports/event-store.ts';
import { openSqliteDocumentStore } from '../sqlite/sqlite-document-store.ts';
import { Metrics } from '../observability/metrics.ts';
import { ReadinessProbe, ReadModelWatch } from '../observability/readiness.ts';
import { installOperations } from '../observability/routes.ts';
import { createServiceApp } from './app.ts';
import { newId } from './decider.ts';
import { ManagedReadModels } from './managed-read-models.ts';
import type { FastifyInstance } from 'fastify';

// A tiny service with one read model, rebuilt and repaired by an operator while it runs.
const catalog = defineEventCatalog('notes', { NoteWritten: z.object({ text: z.string() }) });
const NOTES = collectionSpec<Doc & { text: string }>({ name: 'notes' });
const api = readModelsAdminApi('social');
const admin = { [internalHeaders.admin]: 'true' };

/** Controls the projection from the test: hold it inside `apply`, or make it fail on some texts. */
const projection = {
  hold: null as null | { entered: () => void; released: Promise<void> },
  failOn: null as string | null,
};
const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

let dir: string;
let log: FileEventLog;
let events: EventStore;
let readModels: ManagedReadModels;
let app: FastifyInstance;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-managed-'));
  log = await createFileEventLog({ dir: join(dir, 'log') });
  events = await createLogEventStore({ log, topic: 'notes' });
  const docs = openSqliteDocumentStore({ path: join(dir, 'notes.db') });
  const notes = docs.collection(NOTES);
  readModels = await ManagedReadModels.start({
    group: 'notes-read',
    log,
    store: docs,
    catalogs: [catalog],
    attempts: 1,
    projections: [
      {
        name: 'notes',
        version: 1,
        topics: ['notes'],
        collections: [NOTES],
        apply: async (event, envelope, _record, unit) => {
          const text = (event.data as { text: string }).text;
          if (projection.hold) {
            projection.hold.entered();
            await projection.hold.released;
          }
          if (text === projection.failOn) throw new Error(`cannot store ${text}`);
          await unit.collection(NOTES).replaceOne({ _id: envelope.streamId }, { _id: envelope.streamId, text }, { upsert: true });
        },
      },
    ],
  });
  app = createServiceApp({ name: 'notes', readModels });
  app.get('/api/notes/:id', async (req) => ({ status: 200, note: await notes.findOne({ _id: (req.params as { id: string }).id }) }));
  readModels.install(app, 'social', { checkResponses: true });
  // The probes as every service of the system has them (system/operations.ts).
  const watch = new ReadModelWatch();
  watch.watch('social', readModels);
  installOperations(app, { service: 'social', metrics: new Metrics({ processMetrics: false }), readiness: new ReadinessProbe({ readModels: watch, maxLagEvents: 0 }) });
  app.addHook('onClose', async () => {
    await readModels.stop();
    await docs.close();
  });
  await app.ready();
});

afterEach(async () => {
  projection.hold = null;
  projection.failOn = null;
  await app.close();
  await events.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

async function write(text: string): Promise<string> {
  const streamId = `note-${newId()}`;
  const done = await events.appendToStream(streamId, [{ id: newId(), type: 'NoteWritten', schemaVersion: 1, streamId, occurredAt: new Date().toISOString(), actor: 'u', data: { text } }], { expectedVersion: 'no_stream' });
  await readModels.waitFor(done.positions);
  return streamId;
}

describe('an operator rebuilds the read models online', () => {
  it('answers 503 with Retry-After while the rebuild runs, then the same answers as before', async () => {
    const id = await write('hello');
    await write('world');
    const before = await app.inject({ method: 'GET', url: `/api/notes/${id}` });
    expect(before.json()).toMatchObject({ note: { text: 'hello' } });

    const entered = deferred();
    const release = deferred();
    projection.hold = { entered: entered.resolve, released: release.promise };
    const rebuilding = app.inject({ method: 'POST', url: api.rebuild.paths[0]!, headers: admin });
    await entered.promise;

    const during = await app.inject({ method: 'GET', url: `/api/notes/${id}` });
    expect(during.statusCode).toBe(503);
    expect(during.headers['retry-after']).toBe('1');
    expect(ErrorBodySchema.parse(during.json())).toMatchObject({ status: 503, error_type: 'service_unavailable' });
    expect((await app.inject({ method: 'GET', url: api.state.paths[0]!, headers: admin })).json()).toMatchObject({ state: 'rebuilding' });

    projection.hold = null;
    release.resolve();
    const done = await rebuilding;
    expect(done.statusCode, done.body).toBe(200);
    expect(api.rebuild.response.parse(done.json())).toMatchObject({ state: 'ready', events: 2 });
    const after = await app.inject({ method: 'GET', url: `/api/notes/${id}` });
    expect(after.statusCode).toBe(200);
    expect(after.json()).toEqual(before.json());
  });

  it('is alive but not ready while the rebuild runs (/readyz 503 naming the rebuild), and ready again after it', async () => {
    await write('hello');
    const readyz = async () => {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      return { status: res.statusCode, report: ReadinessSchema.parse(res.json()) };
    };
    expect((await readyz()).status).toBe(200);

    const entered = deferred();
    const release = deferred();
    projection.hold = { entered: entered.resolve, released: release.promise };
    const rebuilding = app.inject({ method: 'POST', url: api.rebuild.paths[0]!, headers: admin });
    await entered.promise;

    const during = await readyz();
    expect(during.status).toBe(503);
    expect(during.report).toMatchObject({ status: 'not_ready', checks: [{ name: 'read-models', ok: false, error: 'notes-read: rebuilding its read models' }] });
    expect((await app.inject({ method: 'HEAD', url: '/readyz' })).statusCode).toBe(503);
    // Alive all the same: a liveness probe must not restart a process that is rebuilding.
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(HealthSchema.parse(health.json())).toEqual({ status: 'ok' });
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);

    projection.hold = null;
    release.resolve();
    expect((await rebuilding).statusCode).toBe(200);
    expect(await readyz()).toMatchObject({ status: 200, report: { status: 'ready', checks: [], readModels: [{ service: 'social', group: 'notes-read', projection: 'notes', lagEvents: 0 }] } });
  });

  it('keeps its admin endpoints to the gateway (401 without the admin header)', async () => {
    for (const endpoint of Object.values(api)) {
      const res = await app.inject({ method: endpoint.method, url: endpoint.paths[0]!.replace(':id', 'notes:0:0') });
      expect(res.statusCode).toBe(401);
      expect(ErrorBodySchema.parse(res.json()).error_type).toBe('authorization_failed');
    }
  });
});

describe('dead letters', () => {
  it('lists an event the projection could not apply, keeps it pending while replay fails, and replays it once fixed', async () => {
    projection.failOn = 'poison';
    const id = await write('poison');
    const listed = api.deadLetters.response.parse((await app.inject({ method: 'GET', url: api.deadLetters.paths[0]!, headers: admin })).json());
    expect(listed.dead_letters).toEqual([expect.objectContaining({ id: 'notes:0:0', topic: 'notes', partition: 0, offset: 0, eventType: 'NoteWritten', projections: ['notes'], reason: 'notes: cannot store poison', status: 'pending' })]);

    const replayUrl = api.replay.paths[0]!.replace(':id', 'notes:0:0');
    const failing = await app.inject({ method: 'POST', url: replayUrl, headers: admin });
    expect(failing.statusCode).toBe(400);
    expect(ErrorBodySchema.parse(failing.json()).error_message).toMatch(/failed again.*stays pending: cannot store poison/);
    expect(api.deadLetters.response.parse((await app.inject({ method: 'GET', url: api.deadLetters.paths[0]!, headers: admin })).json()).number_dead_letters).toBe(1);

    projection.failOn = null;
    const replayed = await app.inject({ method: 'POST', url: replayUrl, headers: admin });
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(api.replay.response.parse(replayed.json()).dead_letter).toMatchObject({ status: 'replayed' });
    expect((await app.inject({ method: 'GET', url: `/api/notes/${id}` })).json()).toMatchObject({ note: { text: 'poison' } });
    expect(api.deadLetters.response.parse((await app.inject({ method: 'GET', url: api.deadLetters.paths[0]!, headers: admin })).json()).number_dead_letters).toBe(0);
    const all = api.deadLetters.response.parse((await app.inject({ method: 'GET', url: `${api.deadLetters.paths[0]!}?all=true`, headers: admin })).json());
    expect(all.dead_letters.map((d) => d.status)).toEqual(['replayed']);
  });

  it('forgets a dead letter that a rebuild applied, so replaying it cannot apply it twice; one that fails again stays pending', async () => {
    projection.failOn = 'poison';
    await write('poison');
    await write('venom');
    const pending = async () => api.deadLetters.response.parse((await app.inject({ method: 'GET', url: api.deadLetters.paths[0]!, headers: admin })).json()).dead_letters;
    expect((await pending()).map((d) => d.id)).toEqual(['notes:0:0']);

    // The cause of `poison` is fixed, but `venom` now fails: the operator rebuilds.
    projection.failOn = 'venom';
    const rebuilt = await app.inject({ method: 'POST', url: api.rebuild.paths[0]!, headers: admin });
    expect(rebuilt.statusCode, rebuilt.body).toBe(200);
    expect((await pending()).map((d) => d.id)).toEqual(['notes:0:1']);
    const again = await app.inject({ method: 'POST', url: api.replay.paths[0]!.replace(':id', 'notes:0:0'), headers: admin });
    expect(again.statusCode).toBe(404);
  });

  it('applies a dead letter once when two replays of it arrive together', async () => {
    projection.failOn = 'poison';
    await write('poison');
    projection.failOn = null;
    const url = api.replay.paths[0]!.replace(':id', 'notes:0:0');
    const answers = await Promise.all([app.inject({ method: 'POST', url, headers: admin }), app.inject({ method: 'POST', url, headers: admin })]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400]);
    expect(ErrorBodySchema.parse(answers.find((a) => a.statusCode === 400)!.json()).error_message).toMatch(/no longer pending/);
  });

  it('answers 404 for an unknown dead letter and 400 for a malformed id', async () => {
    const unknown = await app.inject({ method: 'POST', url: api.replay.paths[0]!.replace(':id', 'notes:0:99'), headers: admin });
    expect(unknown.statusCode).toBe(404);
    expect(ErrorBodySchema.parse(unknown.json()).error_type).toBe('object_not_found');
    const malformed = await app.inject({ method: 'POST', url: api.replay.paths[0]!.replace(':id', 'nonsense'), headers: admin });
    expect(malformed.statusCode).toBe(400);
    expect(ErrorBodySchema.parse(malformed.json()).error_type).toBe('missing_request_data');
  });
});
