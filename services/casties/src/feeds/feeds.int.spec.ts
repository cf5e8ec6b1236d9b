import { api } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CastiesFixture, type Person } from '../test-support/fixture.ts';

let fx: CastiesFixture;
let ada: Person;
let bob: Person;
let loner: Person;
const open = (group: string, question: string) => ({ group_slug: group, poll_type: 'Open', question, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' });
const uuids: Record<string, string> = {};

beforeAll(async () => {
  fx = await CastiesFixture.start();
  [ada, bob, loner] = [await fx.person('ada'), await fx.person('bob'), await fx.person('loner')];
  await fx.group('sports');
  await fx.group('films');
  await fx.group('secret', { requiresApproval: true });
  for (const p of [ada, bob]) await fx.follow(p, 'sports');
  await fx.follow(bob, 'films');
  await fx.follow(bob, 'secret', { approval: true });
  // One Castie a day, oldest first.
  for (const [name, group] of [['derby', 'sports'], ['oscars', 'films'], ['final', 'sports'], ['hidden', 'secret']] as const) {
    uuids[name] = await fx.castie(group === 'sports' ? ada : bob, open(group, `Will the ${name} surprise us?`));
    fx.clock.advance(86_400);
  }
  // A forecast on the oldest Castie makes it the most recently forecasted.
  const derbyYes = Object.keys((await fx.get(`/api/casties/${uuids.derby}/answer/`, ada)).body.answer_options)[0];
  await fx.post(`/api/casties/${uuids.derby}/forecast/`, bob, { answer_id: derbyYes });
});
afterAll(() => fx.close());

const ids = async (url: string, as: Person) => (await fx.get(url, as)).body.castie_ids as string[];

describe('home tabs', () => {
  it('following: followed groups only, most recently forecasted first', async () => {
    expect(await ids('/api/home/following/?ids=true', ada)).toEqual([uuids.derby, uuids.final]);
    expect(await ids('/api/home/?ids=True', ada)).toEqual([uuids.derby, uuids.final]);
    const full = await fx.get('/api/home/', ada);
    const body = api.casties.home.response.parse(full.body);
    expect(Object.keys(body.casties!)).toEqual([uuids.derby, uuids.final]);
    expect(body.casties![uuids.derby!]).toMatchObject({ forecastsCount: 1, friendPics: [], showUsername: true, submitter: 'ada', lastForecastedDate: '2026-03-05' });
  });

  it('spicy: all groups the requester may see, most recently forecasted first', async () => {
    expect(await ids('/api/home/spicy/?ids=true', ada)).toEqual([uuids.derby, uuids.final, uuids.oscars]);
    expect(await ids('/api/home/spicy/?ids=true', bob)).toEqual([uuids.derby, uuids.hidden, uuids.final, uuids.oscars]);
  });

  it('new: most recently created first, never showing approval-only groups to others', async () => {
    expect(await ids('/api/home/new/?ids=true', ada)).toEqual([uuids.final, uuids.oscars, uuids.derby]);
    expect(await ids('/api/home/new/?ids=true', bob)).toEqual([uuids.hidden, uuids.final, uuids.oscars, uuids.derby]);
  });

  it('filters by groups; an empty value selects nothing', async () => {
    expect(await ids('/api/home/new/?ids=true&groups=films&groups=secret', ada)).toEqual([uuids.oscars]);
    expect(await ids('/api/home/new/?ids=true&groups=', ada)).toEqual([]);
    expect((await fx.get('/api/home/new/?groups=', ada)).body.casties).toEqual({});
  });

  it('says following false, with status 200, to someone who follows no group', async () => {
    const res = await fx.get('/api/home/following/', loner);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 200, following: false, profile_handle: 'loner' });
    expect(res.body.casties).toBeUndefined();
  });

  it('pages with limit and before, and says when more exist', async () => {
    const first = (await fx.get('/api/home/new/?ids=true&limit=2', bob)).body;
    expect(first).toMatchObject({ castie_ids: [uuids.hidden, uuids.final], has_more: true });
    const second = (await fx.get(`/api/home/new/?ids=true&limit=2&before=${encodeURIComponent(first.next_before)}`, bob)).body;
    expect(second).toMatchObject({ castie_ids: [uuids.oscars, uuids.derby], has_more: false, next_before: null });
    expect((await fx.get('/api/home/new/?limit=501', bob)).body.error_type).toBe('missing_request_data');
  });
});

describe('search', () => {
  it('finds Casties whose question has words beginning with every query word, with forecast_options', async () => {
    const res = await fx.get('/api/search/casties/?q=surpr%20DERBY', ada);
    expect(Object.keys(res.body.search_results)).toEqual([uuids.derby]);
    expect(res.body.search_results[uuids.derby!].forecast_options).toHaveLength(2);
    expect(Object.keys((await fx.get('/api/search/casties/?q=surprise', ada)).body.search_results)).toHaveLength(3);
    expect(Object.keys((await fx.get('/api/search/casties/?q=hidden', ada)).body.search_results)).toEqual([]);
    expect(Object.keys((await fx.get('/api/search/casties/?q=hidden', bob)).body.search_results)).toEqual([uuids.hidden]);
  });
});

describe('profiles, group pages, leaderboards', () => {
  it('lists the Casties a person created and hides them when the profile is private', async () => {
    const res = await fx.get('/api/profile/ada/mycasties/', bob);
    expect(Object.keys(res.body.myCasties).sort()).toEqual([uuids.derby, uuids.final].sort());
    expect(res.body.myCasties[uuids.derby!]).toEqual({ question: 'Will the derby surprise us?', answerable: true });
    expect((await fx.get('/api/profile/bob/mycasties/?ids_only=True', ada)).body.myCasties).toEqual([uuids.oscars]);
    expect((await fx.get('/api/profile/nobody/mycasties/', ada)).body).toMatchObject({ status: 404, error_type: 'object_not_found' });
  });

  it('shows a group with its ranking and Casties, or without them', async () => {
    const res = await fx.get('/api/groups/sports/', ada);
    const body = api.casties.group.response.parse(res.body);
    expect(body).toMatchObject({ slug: 'sports', following: true, canCreateCastie: true, numberCasties: 2, ranking: 0, totalRanked: 0 });
    expect(Object.keys(body.casties!)).toEqual([uuids.derby, uuids.final]);
    expect((await fx.get('/api/groups/sports/?casties=False', ada)).body.casties).toBeUndefined();
    expect((await fx.get('/api/groups/nope/', ada)).status).toBe(404);
  });

  it('ranks by XP once answered; deleted users vanish from leaderboards', async () => {
    const derby = uuids.derby!;
    const yes = Number(Object.keys((await fx.get(`/api/casties/${derby}/answer/`, ada)).body.answer_options)[0]);
    await fx.post(`/api/casties/${derby}/answer/`, ada, { answer_id: yes });
    const overall = await fx.get('/api/leaderboard/', ada);
    expect(api.casties.leaderboard.response.parse(overall.body).leaderboard_profiles[0]).toMatchObject({ handle: 'bob', level: 1 });
    expect(overall.body.leaderboard_groups).toEqual([{ slug: 'sports', groupName: 'Group sports' }]);
    const group = await fx.get('/api/leaderboard/sports/', ada);
    expect(group.body.leaderboard_profiles.map((e: { handle: string; xp: number }) => [e.handle, e.xp])).toEqual([['bob', 10], ['ada', 0]]);
    expect((await fx.get('/api/groups/sports/accuracy/', bob)).body.accuracy).toMatchObject({ percentCorrect: 100, ranking: 1, totalRanked: 1 });
    await fx.deleteAccount(bob);
    expect((await fx.get('/api/leaderboard/sports/', ada)).body.leaderboard_profiles.map((e: { handle: string }) => e.handle)).toEqual(['ada']);
  });
});

describe('what a page shows after a change', () => {
  // Pages keep the viewer-independent JSON of each Castie between requests: every change must
  // still show on the very next read, of the home tab, the group page and search alike.
  it('shows each forecast, comment, answer and deleted frodad on the next read', async () => {
    const [carl, dana, erin] = [await fx.person('carl'), await fx.person('dana'), await fx.person('erin')];
    await fx.group('news');
    for (const p of [carl, dana, erin]) await fx.follow(p, 'news');
    await fx.befriend(carl, dana);
    const uuid = await fx.castie(carl, open('news', 'Will the paper print a correction?'));
    const [yes, no] = Object.keys((await fx.get(`/api/casties/${uuid}/answer/`, carl)).body.answer_options).map(Number);
    const seen = async () => {
      const home = api.casties.home.response.parse((await fx.get('/api/home/following/?groups=news', carl)).body).casties![uuid]!;
      const group = api.casties.group.response.parse((await fx.get('/api/groups/news/', carl)).body).casties![uuid]!;
      const search = (await fx.get('/api/search/casties/?q=correction', carl)).body.search_results[uuid];
      expect(group).toEqual(home);
      expect(search).toEqual({ ...home, forecast_options: home.forecasts });
      return home;
    };
    const percent = (c: Awaited<ReturnType<typeof seen>>) => c.forecasts.map((f) => f.percentage);
    expect(await seen()).toMatchObject({ forecastsCount: 0, friendCount: 0, friendPics: [], commentsCount: 0, answerSubmitted: false });

    await fx.post(`/api/casties/${uuid}/forecast/`, dana, { answer_id: yes });
    let now = await seen();
    expect(now).toMatchObject({ forecastsCount: 1, friendCount: 1, commentsCount: 0 });
    expect(percent(now)).toEqual([100, 0]);
    await fx.post(`/api/casties/${uuid}/forecast/`, erin, { answer_id: no });
    now = await seen();
    expect(now).toMatchObject({ forecastsCount: 2, friendCount: 1 });
    expect(percent(now)).toEqual([50, 50]);

    await fx.post(`/api/casties/${uuid}/comment/`, erin, { commentText: 'they never do' });
    expect(await seen()).toMatchObject({ commentsCount: 1 });

    await fx.post(`/api/casties/${uuid}/answer/`, carl, { answer_id: yes });
    now = await seen();
    expect(now).toMatchObject({ answerSubmitted: true, is_answerable: false });
    expect(now.forecasts.map((f) => f.is_correct ?? false)).toEqual([true, false]);

    await fx.deleteAccount(dana);
    now = await seen();
    expect(now).toMatchObject({ friendCount: 0, friendPics: [] });
  });
});

describe('a page asked again with nothing changed', () => {
  // A user's page asked again before the read models change may be the answer they got: time
  // alone must still show on it.
  it('shows a Castie answerable once its end passed', async () => {
    const kim = await fx.person('kim');
    await fx.group('markets');
    await fx.follow(kim, 'markets');
    const tomorrow = new Date(fx.clock.now().getTime() + 86_400_000).toISOString().slice(0, 10);
    const uuid = await fx.castie(kim, { group_slug: 'markets', poll_type: 'Regular', closes_on_date: tomorrow, closes_on_time: '18:30', question: 'Will the index close higher?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' });
    const answerable = async () => [
      api.casties.home.response.parse((await fx.get('/api/home/following/?groups=markets', kim)).body).casties![uuid]!.is_answerable,
      (await fx.get('/api/search/casties/?q=index', kim)).body.search_results[uuid].is_answerable,
    ];
    for (let i = 0; i < 2; i++) expect(await answerable()).toEqual([false, false]);
    fx.clock.advance(86_400);
    expect(await answerable()).toEqual([false, false]);
    fx.clock.advance(86_400);
    expect(await answerable()).toEqual([true, true]);
  });
});

describe('frodads on a page', () => {
  it('shows a frodad made, lost or newly forecasting since the last read, in the order they forecast', async () => {
    const [fay, gus, hal, ivy] = [await fx.person('fay'), await fx.person('gus'), await fx.person('hal'), await fx.person('ivy')];
    await fx.group('weather');
    for (const p of [fay, gus, hal, ivy]) await fx.follow(p, 'weather');
    const rain = await fx.castie(fay, open('weather', 'Will it rain on the parade?'));
    const sun = await fx.castie(fay, open('weather', 'Will the sun shine at noon?'));
    const yes = async (uuid: string) => Object.keys((await fx.get(`/api/casties/${uuid}/answer/`, fay)).body.answer_options)[0];
    const pics = async () => {
      const page = api.casties.home.response.parse((await fx.get('/api/home/following/?groups=weather', fay)).body).casties!;
      // The Castie's own page names the same frodads (by handle, in no particular order).
      const detail = (await fx.get(`/api/casties/${rain}/`, fay)).body.castie as { friendCount: number; friendForecasts: Record<string, { handle: string }> };
      const handleIn = (pic: string) => /^\/media\/([a-z]+)/.exec(pic)![1];
      expect(Object.values(detail.friendForecasts).map((f) => f.handle).sort()).toEqual(page[rain]!.friendPics.map(handleIn).sort());
      expect(detail.friendCount).toBe(page[rain]!.friendCount);
      return { rain: page[rain]!.friendPics, sun: page[sun]!.friendPics, rainCount: page[rain]!.friendCount };
    };
    await fx.post(`/api/casties/${rain}/forecast/`, hal, { answer_id: await yes(rain) });
    await fx.post(`/api/casties/${rain}/forecast/`, gus, { answer_id: await yes(rain) });
    // Twice each time: the second read may answer from what the first one found.
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: [], sun: [], rainCount: 0 });

    await fx.befriend(fay, gus);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/gus.png'], sun: [], rainCount: 1 });
    await fx.befriend(hal, fay);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal.png', '/media/gus.png'], sun: [], rainCount: 2 });

    // A frodad's first forecast ever, on the other Castie.
    await fx.befriend(fay, ivy);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal.png', '/media/gus.png'], sun: [], rainCount: 2 });
    await fx.post(`/api/casties/${sun}/forecast/`, ivy, { answer_id: await yes(sun) });
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal.png', '/media/gus.png'], sun: ['/media/ivy.png'], rainCount: 2 });

    // A frodad's new picture, privacy or deleted account, with no change to any Castie.
    await fx.changePicture(hal, '/media/hal-2.png');
    for (let i = 0; i < 2; i++) expect((await pics()).rain).toEqual(['/media/hal-2.png', '/media/gus.png']);
    await fx.setPrivate(gus, true);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal-2.png'], sun: ['/media/ivy.png'], rainCount: 1 });
    await fx.setPrivate(gus, false);
    await fx.deleteAccount(ivy);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal-2.png', '/media/gus.png'], sun: [], rainCount: 2 });

    await fx.unfriend(gus, fay);
    for (let i = 0; i < 2; i++) expect(await pics()).toEqual({ rain: ['/media/hal-2.png'], sun: [], rainCount: 1 });
  });
});

describe('rebuilding the read models', () => {
  it('answers the same after dropping the read models and replaying the log', async () => {
    const urls = ['/api/home/spicy/', '/api/home/new/?limit=2', `/api/casties/${uuids.derby}/`, '/api/search/casties/?q=surprise', '/api/profile/ada/stats/', '/api/groups/sports/', '/api/leaderboard/sports/'];
    const before = await Promise.all(urls.map((u) => fx.get(u, ada)));
    await fx.shutDown();
    await fx.boot();
    const after = await Promise.all(urls.map((u) => fx.get(u, ada)));
    expect(after.map((r) => r.body)).toEqual(before.map((r) => r.body));
  });
});
