import { api } from '@castie/contracts';
import { createStoredSortedSets } from '@castie/platform/embedded/stored-sorted-sets';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CastiesFixture, type Person } from '../test-support/fixture.ts';
import { BOARD_PREFIX } from './read-model.ts';

// Given: a chess group whose Castie was answered so that amy, cal and zed earned the same points
// (33 each: three of four forecasters were right), dan was wrong (0 XP but ranked), its host
// forecast nothing (0 XP, unranked), and Bea follows no group (0 XP).
let fx: CastiesFixture;
let amy: Person;
let Bea: Person;
let cal: Person;
let dan: Person;
let host: Person;
let zed: Person;

beforeAll(async () => {
  fx = await CastiesFixture.start();
  // Signed up in an order that is neither alphabetical nor by score.
  [zed, dan, host, cal, Bea, amy] = [await fx.person('zed'), await fx.person('dan'), await fx.person('host'), await fx.person('cal'), await fx.person('Bea'), await fx.person('amy')];
  await fx.group('chess');
  for (const p of [host, zed, dan, cal, amy]) await fx.follow(p, 'chess');
  const uuid = await fx.castie(host, { group_slug: 'chess', poll_type: 'Open', question: 'Will the champion keep the title?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' });
  const [yes, no] = Object.keys((await fx.get(`/api/casties/${uuid}/answer/`, host)).body.answer_options).map(Number);
  for (const p of [zed, cal, amy]) await fx.post(`/api/casties/${uuid}/forecast/`, p, { answer_id: yes });
  await fx.post(`/api/casties/${uuid}/forecast/`, dan, { answer_id: no });
  expect((await fx.post(`/api/casties/${uuid}/answer/`, host, { answer_id: yes })).status).toBe(200);
});
afterAll(() => fx.close());

const overall = async (query = '') => api.casties.leaderboard.response.parse((await fx.get(`/api/leaderboard/${query}`, amy)).body).leaderboard_profiles.map((e) => [e.handle, e.level]);
const chess = async (query = '') => api.casties.leaderboard.response.parse((await fx.get(`/api/leaderboard/chess/${query}`, amy)).body).leaderboard_profiles.map((e) => [e.handle, e.xp]);
const rank = async (p: Person) => {
  const group = api.casties.group.response.parse((await fx.get('/api/groups/chess/?casties=False', p)).body);
  const accuracy = api.casties.groupAccuracy.response.parse((await fx.get('/api/groups/chess/accuracy/', p)).body).accuracy;
  // The group page and the accuracy page tell the same place.
  expect([accuracy.ranking, accuracy.totalRanked]).toEqual([group.ranking, group.totalRanked]);
  return `${group.ranking}/${group.totalRanked}`;
};
/** Everything the boards show, to compare a rebuilt service with the live one. */
const everything = async () => ({ overall: await overall(), chess: await chess(), ranks: await Promise.all([amy, Bea, cal, dan, host, zed].map(rank)) });

describe('leaderboards', () => {
  it('rank the most XP first and equal XP by handle, whatever its case; a group board holds its followers only', async () => {
    // 33 XP is level 1 (level 2 needs 100).
    expect(await overall()).toEqual([['amy', 1], ['cal', 1], ['zed', 1], ['Bea', 1], ['dan', 1], ['host', 1]]);
    expect(await chess()).toEqual([['amy', 33], ['cal', 33], ['zed', 33], ['dan', 0], ['host', 0]]);
  });

  it('page in the same order with limit and offset', async () => {
    expect(await overall('?limit=2')).toEqual([['amy', 1], ['cal', 1]]);
    expect(await overall('?limit=2&offset=2')).toEqual([['zed', 1], ['Bea', 1]]);
    expect(await chess('?limit=3&offset=3')).toEqual([['dan', 0], ['host', 0]]);
  });

  it('rank within a group those with an answered forecast, ties as on the board; the others are unranked (0)', async () => {
    expect(await rank(amy)).toBe('1/4');
    expect(await rank(cal)).toBe('2/4');
    expect(await rank(zed)).toBe('3/4');
    expect(await rank(dan)).toBe('4/4');
    expect(await rank(host)).toBe('0/4');
    expect(await rank(Bea)).toBe('0/4');
  });
});

describe('what moves people on the boards', () => {
  it('a new handle moves its holder among equals', async () => {
    zed = await fx.rename(zed, 'abe');
    expect(await chess()).toEqual([['abe', 33], ['amy', 33], ['cal', 33], ['dan', 0], ['host', 0]]);
    expect((await overall()).slice(0, 3)).toEqual([['abe', 1], ['amy', 1], ['cal', 1]]);
    expect(await rank(zed)).toBe('1/4');
    expect(await rank(amy)).toBe('2/4');
  });

  it('a deleted account leaves every board, and those below it move up', async () => {
    await fx.deleteAccount(cal);
    expect(await overall()).toEqual([['abe', 1], ['amy', 1], ['Bea', 1], ['dan', 1], ['host', 1]]);
    expect(await chess()).toEqual([['abe', 33], ['amy', 33], ['dan', 0], ['host', 0]]);
    expect(await rank(dan)).toBe('3/3');
    // A follow that reaches the service after the deletion does not bring the account back.
    await fx.follow(cal, 'chess');
    expect((await chess()).map(([handle]) => handle)).not.toContain('cal');
  });

  it('unfollowing leaves the group board and its ranking, not the overall board', async () => {
    await fx.unfollow(dan, 'chess');
    expect(await chess()).toEqual([['abe', 33], ['amy', 33], ['host', 0]]);
    expect(await rank(dan)).toBe('0/2');
    expect((await overall()).map(([handle]) => handle)).toContain('dan');
  });
});

describe('boards rebuilt from the log', () => {
  it('equal the live ones, whether every read model is rebuilt or only the lost sorted sets', async () => {
    const live = await everything();
    const path = join(fx.dir, 'rebuilt.db');
    // A new store: every read model, the boards included, is rebuilt from the log.
    await fx.shutDown();
    await fx.boot(openSqliteDocumentStore({ path }));
    expect(await everything()).toEqual(live);
    // The sorted sets alone are lost (as when Redis is emptied): the boards are rebuilt at start.
    await createStoredSortedSets(fx.documents).dropSortedSets(BOARD_PREFIX);
    await fx.shutDown();
    await fx.boot(openSqliteDocumentStore({ path }));
    expect(await everything()).toEqual(live);
  });
});
