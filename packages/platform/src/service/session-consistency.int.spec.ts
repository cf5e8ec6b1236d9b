import { defineEventCatalog, internalHeaders } from '@castie/contracts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { createLogEventStore } from '../embedded/log-event-store.ts';
import { collectionSpec, type Doc } from '../ports/document-store.ts';
import { openSqliteDocumentStore } from '../sqlite/sqlite-document-store.ts';
import { createServiceApp } from './app.ts';
import { newId } from './decider.ts';
import { startProjections, type ProjectionRunner } from './projections.ts';

// A tiny service whose read model lags on purpose: each event takes 150 ms to project.
const catalog = defineEventCatalog('notes', { NoteWritten: z.object({ text: z.string() }) });
const PROJECTION_DELAY_MS = 150;
const NOTES = collectionSpec<Doc & { text: string }>({ name: 'notes' });

let dir: string;
let log: FileEventLog;
let runner: ProjectionRunner;

async function noteService(options: { gate: boolean }) {
  const store = await createLogEventStore({ log, topic: 'notes' });
  const docs = openSqliteDocumentStore({ path: join(dir, 'notes.db') });
  const notes = docs.collection(NOTES);
  runner = await startProjections({
    group: 'notes-read',
    log,
    store: docs,
    catalogs: [catalog],
    projections: [
      {
        name: 'notes',
        version: 1,
        topics: ['notes'],
        collections: [NOTES],
        apply: async (event, envelope, _record, unit) => {
          await new Promise((r) => setTimeout(r, PROJECTION_DELAY_MS));
          await unit.collection(NOTES).replaceOne({ _id: envelope.streamId }, { _id: envelope.streamId, text: (event.data as { text: string }).text }, { upsert: true });
        },
      },
    ],
  });
  const app = createServiceApp({ name: 'notes', ...(options.gate ? { readModels: runner } : {}) });
  app.post('/notes', async (_req, reply) => {
    const id = newId();
    const appended = await store.appendToStream(
      `note-${id}`,
      [{ id: newId(), type: 'NoteWritten', schemaVersion: 1, streamId: `note-${id}`, occurredAt: new Date().toISOString(), actor: 'u', data: { text: 'hello' } }],
      { expectedVersion: 'no_stream' },
    );
    reply.header(internalHeaders.written, appended.positions.map((p) => `${p.topic}:${p.partition}:${p.offset}`).join(','));
    return { id };
  });
  app.get('/notes/:id', async (req) => ({ note: await notes.findOne({ _id: `note-${(req.params as { id: string }).id}` }) }));
  // The same read on routes that declare which topics' read models they read (RouteOptions.sessionTopics).
  for (const topic of ['notes', 'other']) {
    app.get(`/reads-${topic}/notes/:id`, { config: { sessionTopics: [topic] } }, async (req) => ({ note: await notes.findOne({ _id: `note-${(req.params as { id: string }).id}` }) }));
  }
  app.addHook('onClose', () => docs.close());
  return app;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-consistency-'));
  log = await createFileEventLog({ dir });
});
afterEach(async () => {
  await runner.stop();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('session consistency (rule 6)', () => {
  it('a read that names the positions of its own write waits for the read model and sees the write', async () => {
    const app = await noteService({ gate: true });
    const write = await app.inject({ method: 'POST', url: '/notes' });
    const written = write.headers[internalHeaders.written] as string;
    expect(written).toMatch(/^notes:0:\d+$/);
    const read = await app.inject({ method: 'GET', url: `/notes/${write.json().id}`, headers: { [internalHeaders.after]: written } });
    expect(read.json().note).toMatchObject({ text: 'hello' });
  });

  it('without the positions the same read can miss the write (which is why the gateway sends them)', async () => {
    const app = await noteService({ gate: true });
    const write = await app.inject({ method: 'POST', url: '/notes' });
    const read = await app.inject({ method: 'GET', url: `/notes/${write.json().id}` });
    expect(read.json().note).toBeNull();
  });

  it('a route waits only for the topics it says it reads: one that reads none of the write\'s topics answers at once', async () => {
    const app = await noteService({ gate: true });
    const write = await app.inject({ method: 'POST', url: '/notes' });
    const after = { [internalHeaders.after]: write.headers[internalHeaders.written] as string };
    const elsewhere = await app.inject({ method: 'GET', url: `/reads-other/notes/${write.json().id}`, headers: after });
    expect(elsewhere.json().note).toBeNull();
    const here = await app.inject({ method: 'GET', url: `/reads-notes/notes/${write.json().id}`, headers: after });
    expect(here.json().note).toMatchObject({ text: 'hello' });
  });
});
