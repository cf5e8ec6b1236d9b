import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../deep-freeze.ts';
import { applyUpdateOrNothing, cloneJson, seedFromFilter, undoUpdates, unsetPath, writableCopy, type JsonObject, type Undo } from './json-documents.ts';

describe('an update applied all or nothing', () => {
  const person = (): JsonObject => ({
    _id: 'p1',
    name: 'Ada',
    stats: { forecasts: 3, byGroup: { weather: 2 } },
    following: ['weather', 'club'],
    friends: ['b', 'c'],
    blocked: ['x', 'y'],
    note: 'old',
    score: 5,
  });
  const refuse = () => {
    throw new Error('refused by the check');
  };

  it('leaves the document as it was when the check refuses it, whatever the operators changed, created or appended', () => {
    const doc = person();
    const before = cloneJson(doc);
    const following = doc.following;
    const update = {
      $set: { 'stats.byGroup.weather': 9, 'stats.byGroup.club': 1, 'fresh.deep.path': true, name: 'Bob' },
      $unset: { note: '' },
      $inc: { score: 2, 'stats.forecasts': 1 },
      $max: { 'stats.best': 7 },
      $push: { following: 'sports', 'created.list': 1 },
      $addToSet: { friends: { $each: ['d', 'b'] } },
      $pull: { blocked: 'y' },
    };
    expect(() => applyUpdateOrNothing(doc, update, false, refuse)).toThrow(/refused/);
    expect(doc).toEqual(before);
    // Key order too: documents compare in key order (an equality filter on an embedded object).
    expect(JSON.stringify(doc)).toBe(JSON.stringify(before));
    // The very array the document held, cut back to its length.
    expect(doc.following).toBe(following);
    // The same update without the check applies every change.
    expect(applyUpdateOrNothing(doc, update, false, () => undefined)).toBe(true);
    expect(doc).toMatchObject({ name: 'Bob', score: 7, fresh: { deep: { path: true } }, following: ['weather', 'club', 'sports'], friends: ['b', 'c', 'd'], blocked: ['x'], created: { list: [1] } });
    expect(doc).not.toHaveProperty('note');
  });

  it('leaves the document as it was when an operator fails partway, after others applied', () => {
    const doc = person();
    const before = cloneJson(doc);
    // $set and $unset apply first, then $inc of a text fails.
    expect(() => applyUpdateOrNothing(doc, { $set: { 'stats.byGroup': { other: 1 }, extra: 1 }, $unset: { score: '', 'stats.forecasts': '' }, $inc: { name: 1 } }, false, () => undefined)).toThrow(/\$inc/);
    expect(doc).toEqual(before);
    expect(JSON.stringify(doc)).toBe(JSON.stringify(before));
  });

  it('applies every operator an update names, refuses one that names a field twice or one inside another, and tells no change from a change', () => {
    const none = () => undefined;
    const fresh: JsonObject = { _id: 'p3' };
    expect(applyUpdateOrNothing(fresh, { $set: { name: 'Bob' }, $max: { best: 4 }, $inc: { 'stats.forecasts': 1 }, $setOnInsert: { note: '', seen: 0 } }, true, none)).toBe(true);
    expect(fresh).toEqual({ _id: 'p3', note: '', seen: 0, name: 'Bob', stats: { forecasts: 1 }, best: 4 });
    // MongoDB refuses these ("would create a conflict"): applied in turn, the later operator would win.
    for (const conflicting of [{ $set: { name: 'Bob' }, $setOnInsert: { name: '' } }, { $inc: { 'stats.forecasts': 1 }, $setOnInsert: { stats: { forecasts: 0 } } }, { $set: { stats: {}, 'stats.forecasts': 1 } }, { $setOnInsert: deepFreeze({ stats: { forecasts: 0 } }), $unset: { 'stats.forecasts': '' } }]) {
      const doc: JsonObject = { _id: 'p4' };
      expect(() => applyUpdateOrNothing(doc, conflicting, true, none), JSON.stringify(conflicting)).toThrow(/conflict/);
      expect(doc).toEqual({ _id: 'p4' });
    }
    const doc = person();
    // A $inc of 0, a $max or $min that loses, or to an equal value, changes nothing (modifiedCount 0).
    expect(applyUpdateOrNothing(doc, { $inc: { score: 0 }, $max: { 'stats.forecasts': 1 }, $min: { note: 'older' } }, false, refuse)).toBe(false);
    expect(applyUpdateOrNothing(doc, { $max: { score: 5 } }, false, refuse)).toBe(false);
    expect(applyUpdateOrNothing(doc, { $min: { score: 5 } }, false, refuse)).toBe(false);
    // A $max of an object over null stores its own copy.
    const best = { at: 'x' };
    doc.best = null;
    expect(applyUpdateOrNothing(doc, { $max: { best } }, false, none)).toBe(true);
    best.at = 'y';
    expect(doc.best).toEqual({ at: 'x' });
    expect(() => applyUpdateOrNothing(doc, { $inc: { score: 1 }, $rename: { a: 'b' } } as never, false, none)).toThrow(/unsupported update operator \$rename/);
    expect(doc.score).toBe(5);
  });

  it('undoes a $setOnInsert only when it applied (inserting)', () => {
    const doc: JsonObject = { _id: 'p2' };
    expect(() => applyUpdateOrNothing(doc, { $setOnInsert: { name: '', stats: { forecasts: 0 } }, $inc: { visits: 1 } }, true, refuse)).toThrow(/refused/);
    expect(doc).toEqual({ _id: 'p2' });
  });

  describe('on a document taken from the cache (deeply frozen, shared with every reader)', () => {
    const update = {
      $set: { 'stats.byGroup.weather': 9, 'stats.byGroup.club': 1, name: 'Bob' },
      $unset: { 'stats.forecasts': '' },
      $inc: { score: 2 },
      $push: { following: 'sports' },
      $addToSet: { friends: { $each: ['d', 'b'] } },
      $pull: { blocked: 'y' },
    };

    it('changes a copy as it would change the document itself, and leaves the shared one as it was', () => {
      const shared = deepFreeze(person());
      const copy = writableCopy(shared);
      expect(applyUpdateOrNothing(copy, update, false, () => undefined)).toBe(true);
      const expected = person();
      applyUpdateOrNothing(expected, update, false, () => undefined);
      expect(JSON.stringify(copy)).toBe(JSON.stringify(expected));
      expect(JSON.stringify(shared)).toBe(JSON.stringify(person()));
      // What no write reached is shared, not copied.
      expect(writableCopy(shared).stats).toBe(shared.stats);
    });

    it('puts the copy back as it was when the check refuses the update, the shared parts as the very objects', () => {
      const shared = deepFreeze(person());
      const copy = writableCopy(shared);
      // A first update applied (kept), then one refused: the second one's undo only.
      applyUpdateOrNothing(copy, { $inc: { 'stats.byGroup.weather': 1 } }, false, () => undefined);
      const afterFirst = JSON.stringify(copy);
      const stats = copy.stats;
      expect(() => applyUpdateOrNothing(copy, update, false, refuse)).toThrow(/refused/);
      expect(JSON.stringify(copy)).toBe(afterFirst);
      expect(copy.stats).toBe(stats);
      expect(copy.following).toBe(shared.following);
      expect(JSON.stringify(shared)).toBe(JSON.stringify(person()));
    });

    it('is put back whole, after several updates, by their kept undo (an attempt that failed later)', () => {
      const shared = deepFreeze(person());
      const copy = writableCopy(shared);
      const kept: Undo[] = [];
      applyUpdateOrNothing(copy, { $inc: { 'stats.byGroup.weather': 1 }, $push: { following: 'x' } }, false, () => undefined, kept);
      applyUpdateOrNothing(copy, update, false, () => undefined, kept);
      undoUpdates(kept);
      expect(JSON.stringify(copy)).toBe(JSON.stringify(shared));
      for (const key of ['stats', 'following', 'friends', 'blocked'] as const) expect(copy[key]).toBe(shared[key]);
    });
  });
});

describe('a field path that names __proto__', () => {
  it('is refused by every write, and reaches no other object', () => {
    // As JSON: an object literal's __proto__ sets its prototype instead of naming a key.
    const updates = ['{"$set":{"__proto__.polluted":1}}', '{"$set":{"a.__proto__.polluted":1}}', '{"$inc":{"__proto__.polluted":1}}', '{"$push":{"__proto__.polluted":1}}', '{"$set":{"__proto__":{"polluted":1}}}'];
    for (const update of updates) {
      const doc: JsonObject = { _id: 'x', a: {} };
      expect(() => applyUpdateOrNothing(doc, JSON.parse(update) as JsonObject, false, () => undefined), update).toThrow(/names __proto__/);
      expect(doc).toEqual({ _id: 'x', a: {} });
      expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
    }
    expect(() => seedFromFilter(JSON.parse('{"__proto__.polluted":1}') as JsonObject)).toThrow(/names __proto__/);
    expect(() => unsetPath({ _id: 'x' }, '__proto__.toString')).toThrow(/names __proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof ({} as Record<string, unknown>).toString).toBe('function');
  });
});
