import { afterEach, expect, it } from 'vitest';
import { collectionSpec, eachWriteAlone, type Doc } from '../ports/document-store.ts';
import type { LogRecord } from '../ports/event-log.ts';
import { openSqliteDocumentStore } from '../sqlite/sqlite-document-store.ts';
import { updateOnce } from './update-once.ts';

interface Count extends Doc {
  n: number;
}
const COUNTS = collectionSpec<Count>({ name: 'counts' });
const store = openSqliteDocumentStore({ path: ':memory:' });
afterEach(async () => {
  await store.collection(COUNTS).deleteMany({});
});

// Where each write stands alone (MongoDB), as the guards are written for.
const counts = () => eachWriteAlone(store).collection(COUNTS);
const at = (offset: number, replayed = false): LogRecord => ({ topic: 'tallies.v1', partition: 0, offset, key: 'k', value: '{}', timestamp: 0, ...(replayed ? { replayed: true as const } : {}) });
const count = async (record: LogRecord) => updateOnce(counts(), 'c', record, { $inc: { n: 1 } });
const total = async () => (await store.collection(COUNTS).findOne({ _id: 'c' }))?.n;

it('applies each record once per document, a delivered-again one changing nothing', async () => {
  expect([await count(at(3)), await count(at(3)), await count(at(4)), await count(at(2))]).toEqual(['inserted', null, 'updated', null]);
  expect(await total()).toBe(2);
});

it('applies a replayed dead letter once, though later records were applied, and keeps the later ones applied once', async () => {
  await count(at(7));
  expect([await count(at(5, true)), await count(at(5, true))]).toEqual(['updated', null]);
  // The last offset was not moved back: 7 delivered again still counts nothing.
  expect(await count(at(7))).toBeNull();
  expect(await total()).toBe(2);
});

it('does not apply a record again through a delivery after its replay applied it', async () => {
  // The replay came first on this document (no later record touched it).
  expect(await count(at(5, true))).toBe('inserted');
  expect(await count(at(5))).toBeNull();
  expect(await total()).toBe(1);
});
