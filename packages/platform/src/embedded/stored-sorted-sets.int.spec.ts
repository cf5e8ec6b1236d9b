import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { describeSortedSets } from '../testing/conformance/sorted-sets.ts';
import { openSqliteDocumentStore } from '../sqlite/sqlite-document-store.ts';
import { createStoredSortedSets } from './stored-sorted-sets.ts';

const dir = mkdtempSync(join(tmpdir(), 'castie-sorted-sets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describeSortedSets('read-model store (SQLite in memory)', async () => {
  const store = openSqliteDocumentStore({ path: ':memory:' });
  return { sets: createStoredSortedSets(store), close: () => store.close() };
});

describeSortedSets('read-model store (SQLite file: a writer and a reader connection)', async () => {
  const store = openSqliteDocumentStore({ path: join(dir, `sets-${files++}.db`) });
  return { sets: createStoredSortedSets(store), close: () => store.close() };
});
