import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { collectionSpec, type Doc } from '../ports/document-store.ts';
import { backgroundCheckpoints, type CheckpointFailure } from './background-checkpoints.ts';
import { openSqliteDocumentStore } from './sqlite-document-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'castie-checkpoints-'));
let n = 0;
const file = () => join(dir, `store-${++n}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Note extends Doc {
  text: string;
}
const notes = collectionSpec<Note>({ name: 'notes' });

/**
 * How many times the file's WAL was started over (its header's checkpoint sequence number): a
 * writer starts it over at its next commit once a checkpoint moved all of it into the file.
 * Read from the file, so that looking does not checkpoint.
 */
function walRestarts(path: string): number {
  const header = readFileSync(`${path}-wal`).subarray(0, 32);
  return header.readUInt32BE(12);
}

/** About 2 MB of documents in one commit: under both the 4 MB a commit checkpoints at itself without the thread, and the 16 MB it does with it. */
async function writeMegabytes(store: ReturnType<typeof openSqliteDocumentStore>): Promise<void> {
  await store.transaction(async (unit) => {
    const c = unit.collection(notes);
    for (let i = 0; i < 500; i++) await c.insertOne({ _id: `n${i}`, text: String(i).padEnd(3000, '.') });
  });
}

const aWhile = (ms = 400) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Commits a small change every 100 ms until the WAL was started over (the thread checkpoints every
 * 250 ms, and may take a moment to start), for at most 5 s; the restarts then counted.
 */
async function commitsUntilRestarted(store: ReturnType<typeof openSqliteDocumentStore>, path: string, before: number, atMostMs = 5000): Promise<number> {
  for (let waited = 0; waited < atMostMs; waited += 100) {
    await aWhile(100);
    await store.collection(notes).updateOne({ _id: 'n1' }, { $set: { text: `short ${waited}` } });
    if (walRestarts(path) > before) break;
  }
  return walRestarts(path);
}

describe('sqlite checkpoints in the background', () => {
  it("moves a serving store's WAL into its file without a commit doing it, so the writer starts the WAL over", async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path });
    await writeMegabytes(store);
    const before = walRestarts(path);
    // Once the thread checkpointed, the next commit writes from the WAL's start.
    expect(await commitsUntilRestarted(store, path, before)).toBeGreaterThan(before);
    expect((await store.collection(notes).findOne({ _id: 'n1' }))?.text).toMatch(/^short/);
    expect(await store.collection(notes).countDocuments()).toBe(500);
    await store.close();
  });

  it('leaves a store that does not ask for it to its own commits', async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path, backgroundCheckpoints: false });
    await writeMegabytes(store);
    const before = walRestarts(path);
    // Nothing moves the WAL under 4 MB: the commits append to it.
    expect(await commitsUntilRestarted(store, path, before, 1500)).toBe(before);
    await store.close();
  });

  it('lets the file go before the store closes, so closing moves the WAL into the file and removes it', async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path });
    await writeMegabytes(store);
    expect(existsSync(`${path}-wal`)).toBe(true);
    await store.close();
    // Had the thread still held a connection, the writer would not have been the last one, and the WAL would stay.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = openSqliteDocumentStore({ path });
    expect(await reopened.collection(notes).countDocuments()).toBe(500);
    await reopened.close();
  });

  it('tells who listens of a file it cannot checkpoint, and goes on with the others', async () => {
    const failures: CheckpointFailure[] = [];
    const stopListening = backgroundCheckpoints.onFailure((failure) => failures.push(failure));
    const missing = join(dir, 'no-such-dir', 'gone.db');
    const unwatch = backgroundCheckpoints.watch(missing);
    const path = file();
    const store = openSqliteDocumentStore({ path });
    await writeMegabytes(store);
    const before = walRestarts(path);
    expect(await commitsUntilRestarted(store, path, before)).toBeGreaterThan(before);
    for (let waited = 0; failures.length === 0 && waited < 2000; waited += 50) await aWhile(50);
    expect(failures).toEqual([{ path: missing, error: expect.stringMatching(/does not exist|unable to open/i) }]);
    await unwatch();
    stopListening();
    await store.close();
  });

  it('stops during a bulk load (its loader checkpoints in large steps) and starts again after it', async () => {
    const path = file();
    const store = openSqliteDocumentStore({ path });
    await store.beginBulkLoad([notes.name]);
    await writeMegabytes(store);
    const loaded = walRestarts(path);
    await aWhile();
    await store.collection(notes).updateOne({ _id: 'n1' }, { $set: { text: 'bulk' } });
    expect(walRestarts(path)).toBe(loaded);
    await store.endBulkLoad();
    expect(await commitsUntilRestarted(store, path, loaded)).toBeGreaterThan(loaded);
    await store.close();
  });

  it('lets a process that closed its stores end by itself (npm run seed, a rebuild), and not before they closed', async () => {
    const path = file();
    // A process of its own: the thread must neither keep it alive nor let it end while a store
    // still waits for the thread to let its file go (that would end it in the middle of close).
    const script = `
      import { openSqliteDocumentStore } from './sqlite-document-store.ts';
      const store = openSqliteDocumentStore({ path: ${JSON.stringify(path)} });
      await store.collection({ name: 'notes' }).insertOne({ _id: 'n1', text: 'kept' });
      await store.close();
      console.log('closed');
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: dirname(fileURLToPath(import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // A hang is what this looks for: a child still running after 20 s is killed, and fails the test.
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(killer);
    expect({ code, out: out.trim() }, err).toEqual({ code: 0, out: 'closed' });
    // Closed as a store closes: the WAL moved into the file, which holds the document.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = openSqliteDocumentStore({ path });
    expect(await reopened.collection(notes).findOne({ _id: 'n1' })).toMatchObject({ text: 'kept' });
    await reopened.close();
  }, 30_000);
});
