import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { createMemoryDocumentStore } from './memory-document-store.ts';

// The store answers simple filters with its own compiled matcher and everything else with mingo.
// Both must agree: random documents, random filters, the store's answer against mingo's.
let seed = 7;
const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const scalars = [null, 0, 1, 2, 'a', 'b', 'c', true, false] as const;
const value = (): unknown => (rand() < 0.15 ? undefined : rand() < 0.2 ? [pick(scalars), pick(scalars)] : rand() < 0.1 ? [] : rand() < 0.1 ? { x: pick(scalars) } : pick(scalars));
const fields = ['a', 'b', 'n.x'];

function doc(i: number): Record<string, unknown> {
  const d: Record<string, unknown> = { _id: `d${i}` };
  for (const f of ['a', 'b']) {
    const v = value();
    if (v !== undefined) d[f] = v;
  }
  if (rand() < 0.5) d.n = rand() < 0.3 ? [{ x: pick(scalars) }, { x: pick(scalars) }] : { x: pick(scalars) };
  return d;
}

function condition(): unknown {
  const op = pick(['eq', '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', 'range']);
  const s = pick(scalars);
  switch (op) {
    case 'eq':
      return s;
    case '$in':
    case '$nin':
      return { [op]: [pick(scalars), pick(scalars)] };
    case '$exists':
      return { $exists: rand() < 0.5 };
    case 'range':
      return { $gte: pick([0, 'a']), $lt: pick([2, 'c']) };
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return { [op]: pick([0, 1, 'a', 'b']) };
    default:
      return { [op]: s };
  }
}

function filter(depth = 0): Record<string, unknown> {
  if (depth < 2 && rand() < 0.25) return { [pick(['$and', '$or'])]: [filter(depth + 1), filter(depth + 1)] };
  const f: Record<string, unknown> = {};
  for (let i = 0; i < 1 + Math.floor(rand() * 2); i++) f[pick(fields)] = condition();
  return f;
}

describe('memory document store: compiled matcher agrees with mingo', () => {
  it('on 2,000 random filters over 200 random documents', async () => {
    const store = createMemoryDocumentStore();
    const c = store.collection('random');
    const docs = Array.from({ length: 200 }, (_, i) => doc(i));
    for (const d of docs) await c.insertOne(d as { _id: string });
    for (let i = 0; i < 2000; i++) {
      const f = filter();
      const expected = docs.filter((d) => new Query(f).test(d)).map((d) => d._id).sort();
      const actual = (await c.find(f)).map((d) => d._id).sort();
      expect(actual, JSON.stringify(f)).toEqual(expected);
    }
  });
});

describe('memory document store: fast update path agrees with mingo', () => {
  it('on 3,000 random updates', async () => {
    const { update } = await import('mingo');
    const store = createMemoryDocumentStore();
    const c = store.collection('updates');
    const paths = ['a', 'b', 'n.x', 'counts.7', 'list', 'list.0', 'deep.er.z'];
    const values = [0, 1, 5, -2, 'a', 'z', null, true];
    const op = (): Record<string, Record<string, unknown>> => {
      const name = pick(['$set', '$unset', '$inc', '$max', '$min', '$addToSet', '$push', '$pull']);
      const path = pick(paths);
      const v = name === '$inc' ? pick([1, 2, -1]) : name === '$unset' ? '' : pick(values);
      return { [name]: { [path]: v } };
    };
    for (let i = 0; i < 3000; i++) {
      const start = doc(i);
      if (rand() < 0.5) start.list = [pick(scalars), pick(scalars)];
      if (rand() < 0.5) start.counts = { 7: pick([1, 2]), 8: 3 };
      const ops = op();
      if (rand() < 0.5) Object.assign(ops, op());
      let expected: Record<string, unknown> | 'error' = structuredClone(start);
      try {
        update(expected, ops as never, undefined, undefined, { cloneMode: 'deep' });
      } catch {
        expected = 'error';
      }
      await c.deleteMany({});
      await c.insertOne(structuredClone(start) as { _id: string });
      let actual: Record<string, unknown> | 'error';
      try {
        await c.updateOne({ _id: start._id }, ops);
        actual = (await c.findOne({ _id: start._id })) as Record<string, unknown>;
      } catch {
        actual = 'error';
      }
      expect(actual, `${JSON.stringify(start)} ${JSON.stringify(ops)}`).toEqual(expected);
    }
  });
});
