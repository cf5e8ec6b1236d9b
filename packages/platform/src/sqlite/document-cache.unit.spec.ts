import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DocumentCache } from './document-cache.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const text = (id: string, pad = 0) => JSON.stringify({ _id: id, pad: 'x'.repeat(pad) });

describe('document cache', () => {
  it('hands out one frozen document per id until it is forgotten, and knows which ids have none', () => {
    const cache = new DocumentCache(1 << 20);
    expect(cache.get('people', 'a')).toBeUndefined();
    const a = cache.parsed('people', 'a', text('a'));
    expect(Object.isFrozen(a)).toBe(true);
    expect(cache.parsed('people', 'a', text('a'))).toBe(a);
    expect(cache.get('people', 'a')).toBe(a);
    // Tables are apart.
    expect(cache.get('groups', 'a')).toBeUndefined();
    cache.absent('people', 'b');
    expect(cache.get('people', 'b')).toBeNull();

    cache.forget('people', ['a', 'b', 'nobody']);
    expect(cache.get('people', 'a')).toBeUndefined();
    expect(cache.get('people', 'b')).toBeUndefined();
    const again = cache.parsed('people', 'a', text('a'));
    expect(again).not.toBe(a);
    expect(again).toEqual(a);

    cache.parsed('groups', 'g', text('g'));
    cache.forgetTable('people');
    expect(cache.get('people', 'a')).toBeUndefined();
    expect(cache.get('groups', 'g')).toEqual({ _id: 'g', pad: '' });
    cache.clear();
    expect(cache.get('groups', 'g')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('takes a document a commit wrote in place of the one it held (or of the knowledge that there was none), frozen', () => {
    const cache = new DocumentCache(1 << 20);
    const before = cache.parsed('people', 'a', JSON.stringify({ _id: 'a', n: 1, tags: ['x'] }));
    const written = { _id: 'a', n: 2, tags: ['x', 'y'] };
    expect(cache.committed('people', 'a', written, JSON.stringify(written).length)).toBe(true);
    expect(cache.get('people', 'a')).toEqual({ _id: 'a', n: 2, tags: ['x', 'y'] });
    expect(Object.isFrozen(written) && Object.isFrozen(written.tags)).toBe(true);
    // A reader's document of before stays as it was.
    expect(before).toEqual({ _id: 'a', n: 1, tags: ['x'] });
    cache.absent('people', 'b');
    cache.committed('people', 'b', { _id: 'b' }, 9);
    expect(cache.get('people', 'b')).toEqual({ _id: 'b' });
    // What its JSON text would not give back as it is: not kept (the caller forgets the id).
    for (const odd of [{ _id: 'c', n: Number.NaN }, { _id: 'c', n: -0 }, { _id: 'c', at: new Date(0) }, { _id: 'c', gone: undefined }, { _id: 'c', list: [1, Infinity] }]) {
      expect(cache.committed('people', 'c', odd as never, 30)).toBe(false);
      expect(cache.get('people', 'c')).toBeUndefined();
    }
    // Too large for the cache: not kept, and the older one is gone too.
    const small = new DocumentCache(1000);
    small.parsed('people', 'a', text('a'));
    small.committed('people', 'a', { _id: 'a', pad: 'x'.repeat(1000) }, 1020);
    expect(small.get('people', 'a')).toBeUndefined();
  });

  it('stays within its bound, and keeps what is read over what is not', () => {
    const cache = new DocumentCache(100_000);
    cache.parsed('t', 'hot', text('hot', 1000));
    for (let i = 0; i < 1000; i++) {
      cache.parsed('t', `cold${i}`, text(`cold${i}`, 1000));
      expect(cache.get('t', 'hot')).toBeDefined();
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
    }
    // About thirty documents fit: the oldest unread ones left, the one read every time stayed.
    expect(cache.get('t', 'cold0')).toBeUndefined();
    expect(cache.get('t', 'cold999')).toBeDefined();
    const kept = Array.from({ length: 1000 }, (_, i) => cache.get('t', `cold${i}`)).filter((d) => d !== undefined).length;
    expect(kept).toBeGreaterThan(20);
    expect(kept).toBeLessThan(40);
  });

  it('keeps its bound and its answers through many commits that forget what they wrote', () => {
    const cache = new DocumentCache(50_000);
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 50; i++) cache.parsed('t', `d${i}`, text(`d${i}`, round % 7));
      cache.forget('t', Array.from({ length: 25 }, (_, i) => `d${i * 2}`));
      expect(cache.get('t', 'd0')).toBeUndefined();
      // What no commit changed is still the first version read.
      expect(cache.get('t', 'd1')).toEqual({ _id: 'd1', pad: '' });
      expect(cache.parsed('t', 'd2', text('d2', 2))).toEqual({ _id: 'd2', pad: 'xx' });
      expect(cache.bytes).toBeLessThanOrEqual(50_000);
    }
  });

  it('lets go of what it evicts: documents parsed one after another stay collectable', async () => {
    const cache = new DocumentCache(200_000);
    const refs: { id: string; doc: WeakRef<object> }[] = [];
    for (let i = 0; i < 20_000; i++) {
      const doc = cache.parsed('t', `d${i}`, text(`d${i}`, 100));
      if (i % 100 === 0) refs.push({ id: `d${i}`, doc: new WeakRef(doc) });
    }
    expect(cache.bytes).toBeLessThanOrEqual(200_000);
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    // Every document no longer cached was let go, the newest evicted ones included.
    const evicted = refs.filter((r) => cache.get('t', r.id) === undefined);
    expect(evicted.length).toBeGreaterThan(150);
    expect(evicted.filter((r) => r.doc.deref() !== undefined).map((r) => r.id)).toEqual([]);
  });

  it('holds no more heap after 300k documents passed through it than after 50k', () => {
    const cache = new DocumentCache(200_000);
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const parse = (from: number, to: number) => {
      for (let i = from; i < to; i++) cache.parsed('t', `d${i}`, text(`d${i}`));
    };
    parse(0, 50_000);
    const before = heap();
    parse(50_000, 300_000);
    // Without letting go of evicted entries, 250k of them take tens of MB.
    expect(heap() - before).toBeLessThan(4 * 1024 * 1024);
  });

  it('keeps nothing with a bound of 0, and no entry larger than its bound', () => {
    const none = new DocumentCache(0);
    expect(none.enabled).toBe(false);
    none.parsed('t', 'a', text('a'));
    expect(none.get('t', 'a')).toBeUndefined();
    const small = new DocumentCache(1000);
    small.parsed('t', 'little', text('little'));
    small.absent('t', 'big');
    small.parsed('t', 'big', text('big', 2000));
    // Neither the large document nor the stale "none" it replaces; what fits stays.
    expect(small.get('t', 'big')).toBeUndefined();
    expect(small.get('t', 'little')).toEqual({ _id: 'little', pad: '' });
  });
});
