import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdFilter } from './id-filter.ts';

describe('the filter of ids a rebuilt table may hold', () => {
  it('says "maybe" for every id added, past several layers, and "no" for nearly every other', () => {
    // A first layer of 2^14 bits holds 1,024 ids: 200,000 take eight layers.
    const filter = new IdFilter(1 << 14);
    const added = Array.from({ length: 200_000 }, (_, i) => `${randomUUID()}:${i}`);
    for (const id of added) filter.add(id);
    expect(added.filter((id) => !filter.mayHave(id))).toEqual([]);
    const others = Array.from({ length: 100_000 }, () => randomUUID());
    const falsePositives = others.filter((id) => filter.mayHave(id)).length;
    expect(falsePositives / others.length).toBeLessThan(0.01);
  });

  it('knows nothing of ids never added', () => {
    const filter = new IdFilter();
    expect(filter.mayHave('forecast-1')).toBe(false);
    filter.add('forecast-1');
    expect(filter.mayHave('forecast-1')).toBe(true);
    expect(filter.mayHave('forecast-2')).toBe(false);
    expect(filter.mayHave('')).toBe(false);
  });

  it('refuses a first layer that is not a power of two (its probes would miss bits)', () => {
    expect(() => new IdFilter(1000)).toThrow(/power of two/);
    expect(() => new IdFilter(16)).toThrow(/power of two/);
  });

  it('reads back from its bytes as it was, and goes on growing from there; anything else reads as nothing', () => {
    const filter = new IdFilter(1 << 10);
    const added = Array.from({ length: 1_000 }, (_, i) => `stream-${i}`);
    for (const id of added) filter.add(id);
    const read = IdFilter.fromBytes(filter.toBytes())!;
    expect(read.toBytes().equals(filter.toBytes())).toBe(true);
    expect(added.filter((id) => !read.mayHave(id))).toEqual([]);
    const more = Array.from({ length: 5_000 }, (_, i) => `more-${i}`);
    for (const id of more) read.add(id);
    expect([...added, ...more].filter((id) => !read.mayHave(id))).toEqual([]);
    const others = Array.from({ length: 20_000 }, () => randomUUID());
    expect(others.filter((id) => read.mayHave(id)).length / others.length).toBeLessThan(0.01);
    const bytes = filter.toBytes();
    expect(IdFilter.fromBytes(bytes.subarray(0, bytes.length - 1))).toBeNull();
    expect(IdFilter.fromBytes(Buffer.from('not a filter'))).toBeNull();
  });
});
