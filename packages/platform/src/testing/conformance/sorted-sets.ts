import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SortedSets } from '../../index.ts';

/**
 * The contract every sorted-set adapter fulfils (read-model store, Redis). `make` gives the
 * adapter for a test and `close` ends it; keys are unique per test, so a shared server works.
 */
export function describeSortedSets(name: string, make: () => Promise<{ sets: SortedSets; close: () => Promise<void> }>): void {
  describe(`sorted sets conformance: ${name}`, () => {
    let sets: SortedSets;
    let close: () => Promise<void>;
    let prefix: string;
    beforeEach(async () => {
      ({ sets, close } = await make());
      prefix = `t${randomUUID().slice(0, 8)}:`;
    });
    afterEach(async () => {
      // Leave nothing behind on a shared server.
      await sets.dropSortedSets(prefix);
      await close();
    });
    const key = (k: string): string => prefix + k;
    const set = (k: string, entries: Record<string, number | null>) => sets.setScores(Object.entries(entries).map(([member, score]) => ({ key: key(k), member, score })), null);

    it('ranks the highest score first, equal scores by member in byte order', async () => {
      await set('board', { b: 5, a: 5, B: 5, '10': 5, '9': 5, low: -3, top: 40, zero: 0 });
      expect(await sets.ranked(key('board'), 0, 100)).toEqual([
        { member: 'top', score: 40 },
        { member: '10', score: 5 },
        { member: '9', score: 5 },
        { member: 'B', score: 5 },
        { member: 'a', score: 5 },
        { member: 'b', score: 5 },
        { member: 'zero', score: 0 },
        { member: 'low', score: -3 },
      ]);
    });

    it('keeps a member once: a second score replaces the first', async () => {
      await set('board', { ann: 10, bob: 20 });
      await set('board', { ann: 30 });
      expect(await sets.ranked(key('board'), 0, 10)).toEqual([
        { member: 'ann', score: 30 },
        { member: 'bob', score: 20 },
      ]);
      expect(await sets.size(key('board'))).toBe(2);
    });

    it('pages by offset and limit, and answers nothing past the end or for an unknown set', async () => {
      await set('board', { a: 1, b: 2, c: 3, d: 4, e: 5 });
      expect((await sets.ranked(key('board'), 1, 2)).map((m) => m.member)).toEqual(['d', 'c']);
      expect((await sets.ranked(key('board'), 4, 10)).map((m) => m.member)).toEqual(['a']);
      expect(await sets.ranked(key('board'), 5, 10)).toEqual([]);
      expect(await sets.ranked(key('nothing'), 0, 10)).toEqual([]);
      expect(await sets.ranked(key('board'), 0, 0)).toEqual([]);
    });

    it("tells a member's rank from 0, ties included, and null for a stranger", async () => {
      await set('board', { ann: 10, bob: 10, cid: 20, dan: 5 });
      expect(await sets.rankOf(key('board'), 'cid')).toBe(0);
      expect(await sets.rankOf(key('board'), 'ann')).toBe(1);
      expect(await sets.rankOf(key('board'), 'bob')).toBe(2);
      expect(await sets.rankOf(key('board'), 'dan')).toBe(3);
      expect(await sets.rankOf(key('board'), 'eve')).toBeNull();
      expect(await sets.rankOf(key('nothing'), 'ann')).toBeNull();
    });

    it('removes a member with a null score; the ones below move up; removing a stranger changes nothing', async () => {
      await set('board', { ann: 30, bob: 20, cid: 10 });
      await set('board', { ann: null, eve: null });
      expect(await sets.rankOf(key('board'), 'cid')).toBe(1);
      expect(await sets.rankOf(key('board'), 'ann')).toBeNull();
      expect(await sets.size(key('board'))).toBe(2);
      await set('board', { bob: null, cid: null });
      expect(await sets.size(key('board'))).toBe(0);
      expect(await sets.ranked(key('board'), 0, 10)).toEqual([]);
    });

    it('applies changes to several sets in one call', async () => {
      await sets.setScores([
        { key: key('overall'), member: 'ann', score: 12 },
        { key: key('group:a'), member: 'ann', score: 7 },
        { key: key('group:b'), member: 'ann', score: 5 },
      ], null);
      await sets.setScores([
        { key: key('overall'), member: 'ann', score: null },
        { key: key('group:a'), member: 'ann', score: null },
        { key: key('group:b'), member: 'bob', score: 9 },
      ], null);
      expect(await sets.size(key('overall'))).toBe(0);
      expect(await sets.size(key('group:a'))).toBe(0);
      expect(await sets.ranked(key('group:b'), 0, 10)).toEqual([
        { member: 'bob', score: 9 },
        { member: 'ann', score: 5 },
      ]);
    });

    it('drops the sets under a prefix and only those', async () => {
      await set('board:a', { ann: 1 });
      await set('board:b', { bob: 2 });
      await set('other', { cid: 3 });
      await sets.dropSortedSets(key('board:'));
      expect(await sets.size(key('board:a'))).toBe(0);
      expect(await sets.size(key('board:b'))).toBe(0);
      expect(await sets.ranked(key('other'), 0, 10)).toEqual([{ member: 'cid', score: 3 }]);
    });

    it('keeps large integer scores exact', async () => {
      await set('board', { big: 2 ** 40, small: 1 });
      expect(await sets.ranked(key('board'), 0, 1)).toEqual([{ member: 'big', score: 2 ** 40 }]);
    });
  });
}
