import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectionSpec, type Doc } from '../ports/document-store.ts';
import { moveIntoPlace, partialOf, removePartial, startAsCopyOf, type FinishedProjection } from './read-model-copies.ts';
import { openSqliteDocumentStore } from './sqlite-document-store.ts';

const projection = (name: string): FinishedProjection => ({ name, version: 1, collections: JSON.stringify([{ name: `${name}_docs` }]) });
const docs = (name: string) => collectionSpec<Doc>({ name: `${name}_docs` });
// The runner's own collections, by their names (service/projections.ts).
const versions = collectionSpec<Doc & { version: number }>({ name: 'projection_versions' });
const checkpoints = collectionSpec<Doc & { projection: string; offset: number }>({ name: 'projection_checkpoints', indexes: [{ keys: { projection: 1 } }] });

describe('starting a new read-model file as a copy of a finished one', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'castie-copies-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A file as the groups thread leaves it: people and groups, with their versions and checkpoints, closed. */
  async function finished(path: string): Promise<void> {
    const store = openSqliteDocumentStore({ path });
    for (const name of ['people', 'groups']) {
      await store.collection(docs(name)).insertOne({ _id: `${name}-1` });
      await store.collection(versions).insertOne({ _id: name, version: 1 });
      await store.collection(checkpoints).insertOne({ _id: `${name}|groups:0`, projection: name, offset: 41 });
    }
    await store.close();
  }

  it('copies a closed file, less the read models the new one does not keep, into a partial file moved into place once built, never over an existing file', async () => {
    await finished(join(dir, 'groups.db'));
    // What a try killed midway left behind is replaced.
    writeFileSync(partialOf(join(dir, 'social.db')), 'left by a crash');
    expect(await startAsCopyOf(join(dir, 'groups.db'), join(dir, 'social.db'), [projection('groups')])).toBe(true);
    // Built on under its partial name (a rebuild thread's private file), then moved into place.
    expect(existsSync(join(dir, 'social.db'))).toBe(false);
    const building = openSqliteDocumentStore({ path: partialOf(join(dir, 'social.db')), privateFile: true });
    await building.collection(docs('people')).insertOne({ _id: 'people-2' });
    await building.close();
    moveIntoPlace(join(dir, 'social.db'));
    expect(existsSync(partialOf(join(dir, 'social.db')))).toBe(false);
    const social = openSqliteDocumentStore({ path: join(dir, 'social.db') });
    try {
      expect(await social.collection(docs('people')).find({})).toEqual([{ _id: 'people-1' }, { _id: 'people-2' }]);
      expect(await social.collection(versions).find({})).toEqual([{ _id: 'people', version: 1 }]);
      expect((await social.collection(checkpoints).find({})).map((c) => c._id)).toEqual(['people|groups:0']);
    } finally {
      await social.close();
    }
    const db = new Database(join(dir, 'social.db'), { readonly: true });
    try {
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'groups%'`).all()).toEqual([]);
    } finally {
      db.close();
    }
    // The source is left as it was.
    const groups = openSqliteDocumentStore({ path: join(dir, 'groups.db') });
    expect(await groups.collection(docs('groups')).countDocuments({})).toBe(1);
    await groups.close();
    await expect(startAsCopyOf(join(dir, 'groups.db'), join(dir, 'social.db'), [])).rejects.toThrow(/exists already/);
  });

  it('does not copy a file whose writer has not closed it (commits still in its WAL)', async () => {
    const open = openSqliteDocumentStore({ path: join(dir, 'groups.db'), backgroundCheckpoints: false });
    try {
      await open.collection(docs('people')).insertOne({ _id: 'people-1' });
      expect(await startAsCopyOf(join(dir, 'groups.db'), join(dir, 'social.db'), [])).toBe(false);
      expect(existsSync(join(dir, 'social.db'))).toBe(false);
    } finally {
      await open.close();
    }
  });

  it('moves a file into place over nothing a deleted file left beside it (its WAL would be applied to the new one)', async () => {
    const path = join(dir, 'casties.db');
    // A file whose last commit is still in its WAL when it is deleted alone (after a crash, say).
    const old = openSqliteDocumentStore({ path, backgroundCheckpoints: false });
    await old.collection(docs('people')).insertOne({ _id: 'old' });
    copyFileSync(`${path}-wal`, join(dir, 'left-wal'));
    await old.close();
    rmSync(path);
    renameSync(join(dir, 'left-wal'), `${path}-wal`);
    const building = openSqliteDocumentStore({ path: partialOf(path), privateFile: true });
    for (const id of ['new-1', 'new-2']) await building.collection(docs('people')).insertOne({ _id: id });
    await building.close();
    moveIntoPlace(path);
    const moved = openSqliteDocumentStore({ path });
    try {
      expect((await moved.collection(docs('people')).find({})).map((d) => d._id).sort()).toEqual(['new-1', 'new-2']);
    } finally {
      await moved.close();
    }
  });

  it('removes what a try killed midway left of a new file: the partial file and its journals, nothing else', () => {
    const path = join(dir, 'casties.db');
    writeFileSync(path, 'a finished file');
    for (const suffix of ['', '-journal', '-wal', '-shm']) writeFileSync(`${partialOf(path)}${suffix}`, 'left by a crash');
    removePartial(path);
    for (const suffix of ['', '-journal', '-wal', '-shm']) expect(existsSync(`${partialOf(path)}${suffix}`)).toBe(false);
    expect(existsSync(path)).toBe(true);
    // Nothing there is fine too.
    removePartial(join(dir, 'social.db'));
  });
});
