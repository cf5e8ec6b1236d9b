import { describe, expect, it } from 'vitest';
import { applyUpdateOrNothing, cloneJson, type JsonObject } from './json-documents.ts';

describe('an update applied all or nothing', () => {
  const person = (): JsonObject => ({
    _id: 'p1',
    name: 'Ada',
    stats: { forecasts: 3, byGroup: { weather: 2 } },
    following: ['weather', 'club'],
    friends: ['b', 'c'],
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
      $pull: { friends: 'c' },
    };
    expect(() => applyUpdateOrNothing(doc, update, false, refuse)).toThrow(/refused/);
    expect(doc).toEqual(before);
    // Key order too: documents compare in key order (an equality filter on an embedded object).
    expect(JSON.stringify(doc)).toBe(JSON.stringify(before));
    // The very array the document held, cut back to its length.
    expect(doc.following).toBe(following);
    // The same update without the check applies every change.
    expect(applyUpdateOrNothing(doc, update, false, () => undefined)).toBe(true);
    expect(doc).toMatchObject({ name: 'Bob', score: 7, fresh: { deep: { path: true } }, following: ['weather', 'club', 'sports'], friends: ['b', 'd'], created: { list: [1] } });
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

  it('undoes a $setOnInsert only when it applied (inserting)', () => {
    const doc: JsonObject = { _id: 'p2' };
    expect(() => applyUpdateOrNothing(doc, { $setOnInsert: { name: '', stats: { forecasts: 0 } }, $inc: { 'stats.forecasts': 1 } }, true, refuse)).toThrow(/refused/);
    expect(doc).toEqual({ _id: 'p2' });
  });
});
