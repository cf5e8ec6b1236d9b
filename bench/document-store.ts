// Read-model query throughput of the embedded document store at the size the service expects
// (20k documents): indexed equality lookups against the same lookups by full scan, and the
// "top N of a group" and "top N overall" queries that feeds and leaderboards make.
// Run: node scripts/castie.mjs bench document-store
// bench/ sits outside the workspace packages, so it imports the source directly.
import { createMemoryDocumentStore } from '../packages/platform/src/embedded/memory-document-store.ts';
import type { Doc, Filter, FindOptions } from '../packages/platform/src/ports/document-store.ts';

const DOCS = 20_000;
const GROUPS = 200;
const RUN_MS = 1_000;

function doc(i: number): Doc {
  return {
    _id: `doc${i}`,
    handle: `user${i}`,
    groupId: `g${i % GROUPS}`,
    score: (i * 7919) % 100_003,
    tags: [`t${i % 10}`, `t${i % 7}`],
    profile: { name: `User ${i}`, city: `city${i % 50}` },
    createdAt: new Date(1_700_000_000_000 + i * 60_000),
  };
}

const store = createMemoryDocumentStore();
const indexed = store.collection('indexed');
const plain = store.collection('plain');
await indexed.createIndex({ handle: 1 }, { unique: true });
await indexed.createIndex({ groupId: 1, score: -1 });
for (let i = 0; i < DOCS; i++) {
  await indexed.insertOne(doc(i));
  await plain.insertOne(doc(i));
}

/** Runs `query(n)` for about RUN_MS and returns queries per second. */
async function rate(query: (n: number) => Promise<unknown>): Promise<number> {
  for (let n = 0; n < 50; n++) await query(n);
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < RUN_MS) await query(n++);
  return n / ((performance.now() - start) / 1000);
}

const pick = (n: number): number => (n * 104_729) % DOCS;
const byHandle = (n: number): Filter => ({ handle: `user${pick(n)}` });
const byHandles = (n: number): Filter => ({ handle: { $in: [0, 1, 2, 3, 4].map((k) => `user${pick(n + k)}`) } });
const topOfGroup = (n: number): [Filter, FindOptions] => [{ groupId: `g${n % GROUPS}` }, { sort: { score: -1, _id: 1 }, limit: 20 }];
const topOverall = (n: number): [Filter, FindOptions] => [{}, { sort: { score: -1, _id: 1 }, skip: n % 5, limit: 20 }];

const rows: Array<[string, number, number]> = [
  ['findOne({ handle })', await rate((n) => indexed.findOne(byHandle(n))), await rate((n) => plain.findOne(byHandle(n)))],
  ['find({ handle: { $in: 5 } })', await rate((n) => indexed.find(byHandles(n))), await rate((n) => plain.find(byHandles(n)))],
  ['find({ groupId }) sort score, limit 20', await rate((n) => indexed.find(...topOfGroup(n))), await rate((n) => plain.find(...topOfGroup(n)))],
  ['find({}) sort score, limit 20', await rate((n) => indexed.find(...topOverall(n))), await rate((n) => plain.find(...topOverall(n)))],
  ['findOne({ _id })', await rate((n) => indexed.findOne({ _id: `doc${pick(n)}` })), await rate((n) => plain.findOne({ _id: `doc${pick(n)}` }))],
];

const fmt = (v: number): string => Math.round(v).toLocaleString('en-US');
console.log(`document store (embedded), ${DOCS.toLocaleString('en-US')} documents, queries per second\n`);
console.log(['query'.padEnd(40), 'indexed'.padStart(10), 'full scan'.padStart(10), 'speed-up'.padStart(9)].join(' '));
for (const [name, withIndex, withoutIndex] of rows) {
  console.log([name.padEnd(40), fmt(withIndex).padStart(10), fmt(withoutIndex).padStart(10), `${(withIndex / withoutIndex).toFixed(1)}x`.padStart(9)].join(' '));
}
await store.close();
