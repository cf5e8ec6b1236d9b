import { api } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CastiesFixture, type Person } from '../test-support/fixture.ts';

let fx: CastiesFixture;
let ada: Person;
let bob: Person;
let cy: Person;

// The fixture's clock stands at 2026-03-01 12:00 UTC.
const regular = (extra: Record<string, unknown> = {}) => ({
  group_slug: 'sports',
  poll_type: 'Regular',
  closes_on_date: '2026-03-02',
  closes_on_time: '18:30',
  question: 'Who wins the derby?',
  answer_type: 'Set answer options',
  answer_option: ['Home', 'Away', 'Draw'],
  display_created_by: 'True',
  ...extra,
});

beforeAll(async () => {
  fx = await CastiesFixture.start();
  [ada, bob, cy] = [await fx.person('ada'), await fx.person('bob'), await fx.person('cy')];
  await fx.group('sports');
  await fx.group('secret', { requiresApproval: true });
  for (const p of [ada, bob, cy]) await fx.follow(p, 'sports');
  await fx.follow(ada, 'secret', { approval: true });
  await fx.befriend(ada, bob);
});
afterAll(() => fx.close());

describe('creating a Castie', () => {
  it('creates one and shows it in detail, formatted for the requester', async () => {
    const res = await fx.post('/api/casties/create/', ada, regular());
    expect(res.body).toEqual({ status: 200, castie: 'created successfully', castie_uuid: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const detail = await fx.get(`/api/casties/${res.body.castie_uuid}/`, bob);
    const castie = api.casties.detail.response.parse(detail.body).castie;
    expect(castie).toMatchObject({
      uuid: res.body.castie_uuid,
      question: 'Who wins the derby?',
      groupSlug: 'sports',
      showUsername: true,
      submitter: 'ada',
      createdAtDate: '2026-03-01',
      createdAtTime: '12:00:00.000000',
      lastForecastedDate: '2026-03-01',
      allowWriteIn: false,
      setAnswered: true,
      openEnded: false,
      endDate: '2026-03-02',
      endTime: '18:30',
      is_answerable: false,
      friendCount: 0,
      commentsCount: 0,
      answerSubmitted: false,
      correctIndex: null,
      forecastsCount: 0,
      friendForecasts: {},
    });
    expect(castie.userForecast).toBeUndefined();
    expect(castie.forecasts.map((o) => [o.answer_text, o.percentage])).toEqual([['Home', 0], ['Away', 0], ['Draw', 0]]);
  });

  it.each([
    ['closes in the past', { closes_on_date: '2026-03-01', closes_on_time: '11:59' }, /in the past/],
    ['fewer than 2 options', { answer_option: ['Only', ' '] }, /at least 2/],
    ['an unknown group', { group_slug: 'nope' }, /does not exist/],
    ['a group the creator does not follow', { group_slug: 'secret' }, /may not create/],
    ['a date that does not exist', { closes_on_date: '2026-02-30' }, /not a valid date/],
  ])('refuses a Castie that %s', async (_name, fields, message) => {
    const user = 'group_slug' in fields && fields.group_slug === 'secret' ? bob : ada;
    const res = await fx.post('/api/casties/create/', user, regular(fields));
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe('castie_not_created');
    expect(res.body.error_message).toMatch(message);
  });

  it('reads the end in the service time zone and shows null end for open-ended Casties', async () => {
    const uuid = await fx.castie(ada, regular({ poll_type: 'Open', answer_type: 'Write-in answers', answer_option: [] }));
    const castie = (await fx.get(`/api/casties/${uuid}/`, ada)).body.castie;
    expect(castie).toMatchObject({ openEnded: true, endDate: null, endTime: null, is_answerable: true, allowWriteIn: true, setAnswered: false, forecasts: [] });
  });
});

describe('forecasting and answering', () => {
  it('records one forecast per user, refuses the rest, then scores the answer', async () => {
    const uuid = await fx.castie(ada, regular());
    const options = (await fx.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as Record<string, string>;
    const id = (text: string) => Number(Object.entries(options).find(([, t]) => t === text)![0]);

    const placed = await fx.post(`/api/casties/${uuid}/forecast/`, bob, { answer_id: String(id('Home')) });
    expect(placed.body).toEqual({ status: 200, message: 'forecast successfully recorded', castie_uuid: uuid, answer_id: id('Home'), user_forecast_text: 'Home' });
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, bob, { answer_id: String(id('Away')) })).body).toMatchObject({ status: 400, error_type: 'cannot_forecast', error_message: 'the User has already forecasted this Castie' });
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, cy, {})).body).toMatchObject({ error_type: 'cannot_forecast', error_message: 'answer_id was not sent in request' });
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, cy, { answer_id: '12' })).body).toMatchObject({
      error_type: 'cannot_forecast',
      error_message: 'the answer_id provided does not correspond to a valid answer option for this castie',
    });
    await fx.post(`/api/casties/${uuid}/forecast/`, cy, { answer_id: id('Away') });
    await fx.post(`/api/casties/${uuid}/forecast/`, ada, { answer_id: id('Away') });
    expect((await fx.post('/api/casties/0123456789abcdef0123456789abcdef/forecast/', cy, { answer_id: 1 })).status).toBe(404);

    // Ada sees her friend Bob's forecast and her own.
    const seen = (await fx.get(`/api/casties/${uuid}/`, ada)).body.castie;
    expect(seen.userForecast).toEqual({ forecast_text: 'Away', forecast_id: expect.any(Number), is_correct: false, answer_id: id('Away') });
    expect(seen.friendCount).toBe(1);
    expect(Object.values(seen.friendForecasts)).toEqual([{ handle: 'bob', forecast_text: 'Home', answer_id: id('Home') }]);
    expect(seen.forecasts.map((o: { percentage: number }) => o.percentage)).toEqual([33.3, 66.7, 0]);

    // Not yet ended: nobody can answer; then time passes.
    expect((await fx.post(`/api/casties/${uuid}/answer/`, ada, { answer_id: id('Home') })).body).toMatchObject({ error_type: 'castie_not_answerable', error_message: /not ended yet/ });
    expect((await fx.get('/api/casties/needsanswer/', ada)).body).toMatchObject({ needs_answer: false });
    fx.clock.advance(31 * 3600);
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, bob, { answer_id: id('Home') })).body.error_message).toBe('the User has already forecasted this Castie');
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, fx.clock && (await fx.person()), { answer_id: id('Home') })).body.error_message).toBe(
      'this castie is not accepting forecasts- end date/time has passed',
    );
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).body.castie.is_answerable).toBe(true);
    expect((await fx.get('/api/casties/needsanswer/', ada)).body).toMatchObject({ needs_answer: true, number_needing_answer: expect.any(Number) });
    expect((await fx.post(`/api/casties/${uuid}/answer/`, bob, { answer_id: id('Home') })).body).toMatchObject({ error_type: 'castie_not_answerable', error_message: /only the creator/ });

    const answered = await fx.post(`/api/casties/${uuid}/answer/`, ada, { answer_id: id('Home') });
    const castie = api.casties.answer.response.parse(answered.body).castie;
    expect(castie).toMatchObject({ answerSubmitted: true, correctIndex: 'Home', is_answerable: false });
    expect(castie.forecasts.find((o) => o.answer_text === 'Home')).toMatchObject({ is_correct: true });
    expect(castie.forecasts.find((o) => o.answer_text === 'Away')).not.toHaveProperty('is_correct');
    expect(Object.values(castie.friendForecasts)).toEqual([{ handle: 'bob', forecast_text: 'Home', answer_id: id('Home'), is_correct: true }]);
    expect((await fx.post(`/api/casties/${uuid}/answer/`, ada, { answer_id: id('Home') })).body).toMatchObject({ error_type: 'castie_not_answerable', error_message: /already been answered/ });

    // Bob was right against two of three: 10 + round(90 × (1 − 1/3)) = 70 points.
    const stats = await fx.get('/api/profile/bob/stats/', cy);
    const mine = Object.values(stats.body.myForecasts as Record<string, { uuid: string; points_earned: number; is_correct: boolean }>).find((f) => f.uuid === uuid);
    expect(mine).toMatchObject({ points_earned: 70, is_correct: true, answerSubmitted: true, is_active: false });
    expect(stats.body.profileInfo).toMatchObject({ handle: 'bob', forecastsNumber: expect.any(Number) });
  });

  it('answers write-in Casties by keyword (contains, any case) and closes open-ended ones', async () => {
    const uuid = await fx.castie(ada, regular({ poll_type: 'Open', answer_type: 'Write-in answers', answer_option: [], question: 'Who scores first?' }));
    await fx.post(`/api/casties/${uuid}/forecast/`, bob, { forecast_text: '  Kylian Mbappe ' });
    await fx.post(`/api/casties/${uuid}/forecast/`, cy, { forecast_text: 'kane' });
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, ada, {})).body.error_message).toBe('forecast_text was not sent in request');
    const answered = await fx.post(`/api/casties/${uuid}/answer/`, ada, { keyword: 'MBAPPE' });
    expect(answered.body.castie).toMatchObject({ answerSubmitted: true, correctIndex: 'MBAPPE', is_answerable: false, forecastsCount: 2 });
    expect(answered.body.castie.forecasts).toEqual([
      { answer_text: 'kane', percentage: 50 },
      { answer_text: 'Kylian Mbappe', percentage: 50, is_correct: true },
    ]);
    // Answered, the open-ended Castie has ended.
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, ada, { forecast_text: 'x' })).body.error_type).toBe('cannot_forecast');
    const bobs = Object.values((await fx.get('/api/profile/bob/stats/', bob)).body.myForecasts as Record<string, { uuid: string; points_earned: number }>).find((f) => f.uuid === uuid);
    expect(bobs?.points_earned).toBe(55);
  });

  it('does not score an answer on forecasts the read model has not counted yet: 503, and the answer given again later scores them all', async () => {
    const uuid = await fx.castie(ada, regular({ poll_type: 'Open', answer_type: 'Write-in answers', answer_option: [], question: 'Who scores last?' }));
    await fx.post(`/api/casties/${uuid}/forecast/`, bob, { forecast_text: 'Saka' });
    // Cy's forecast is accepted (its stream says so) while the read models stand still.
    await fx.runner.pause();
    try {
      expect((await fx.post(`/api/casties/${uuid}/forecast/`, cy, { forecast_text: 'saka' })).status).toBe(200);
      const refused = await fx.post(`/api/casties/${uuid}/answer/`, ada, { keyword: 'SAKA' });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error_type: 'service_unavailable', error_message: /still being counted/ });
    } finally {
      fx.runner.resume();
    }
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).body.castie).toMatchObject({ answerSubmitted: false, is_answerable: true });
    const answered = await fx.post(`/api/casties/${uuid}/answer/`, ada, { keyword: 'SAKA' });
    expect(answered.body.castie).toMatchObject({ answerSubmitted: true, forecastsCount: 2 });
    for (const p of [bob, cy]) {
      const mine = Object.values((await fx.get(`/api/profile/${p.handle}/stats/`, p)).body.myForecasts as Record<string, { uuid: string; points_earned: number; is_correct: boolean }>).find((f) => f.uuid === uuid);
      // Both right, of two: 10 + round(90 × (1 − 2/2)) = 10 points each.
      expect(mine).toMatchObject({ is_correct: true, points_earned: 10 });
    }
  }, 15_000);

  it('hides Casties of approval-required groups from those not granted', async () => {
    const uuid = await fx.castie(ada, regular({ group_slug: 'secret', poll_type: 'Open' }));
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).status).toBe(200);
    expect((await fx.get(`/api/casties/${uuid}/`, bob)).body).toMatchObject({ status: 404, error_type: 'object_not_found', error_message: 'the requested castie could not be found. make sure you are sending a valid uuid' });
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, bob, { answer_id: 1 })).status).toBe(404);
    expect((await fx.post(`/api/casties/${uuid}/comment/`, bob, { commentText: 'hi' })).status).toBe(404);
  });
});

describe('one forecast per user per Castie under concurrency', () => {
  it('of 12 concurrent forecasts by one user exactly one wins', async () => {
    const uuid = await fx.castie(ada, regular({ poll_type: 'Open' }));
    const options = (await fx.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as Record<string, string>;
    const ids = Object.keys(options);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => fx.post(`/api/casties/${uuid}/forecast/`, cy, { answer_id: ids[i % ids.length] })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.body.error_message === 'the User has already forecasted this Castie')).toHaveLength(11);
    expect((await fx.get(`/api/casties/${uuid}/`, cy)).body.castie.forecastsCount).toBe(1);
  });

  it('200 users forecasting one Castie at once all win', async () => {
    const uuid = await fx.castie(ada, regular({ poll_type: 'Open' }));
    const answerId = Object.keys((await fx.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as Record<string, string>)[0];
    const crowd: Person[] = [];
    for (let i = 0; i < 200; i++) crowd.push(await fx.person(`crowd${i}`));
    const results = await Promise.all(crowd.map((p) => fx.post(`/api/casties/${uuid}/forecast/`, p, { answer_id: answerId })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).body.castie.forecastsCount).toBe(200);
  });
});

describe('privacy of forecasts', () => {
  it("a private frodad's forecast is not shown to friends: not in friendForecasts, friendPics or friendCount", async () => {
    const [dee, eve] = [await fx.person('dee'), await fx.person('eve')];
    for (const p of [dee, eve]) await fx.follow(p, 'sports');
    await fx.befriend(dee, eve);
    const uuid = await fx.castie(dee, regular({ question: 'Who wins the cup?', closes_on_date: '2030-01-01' }));
    const options = (await fx.get(`/api/casties/${uuid}/answer/`, dee)).body.answer_options as Record<string, string>;
    await fx.post(`/api/casties/${uuid}/forecast/`, eve, { answer_id: Object.keys(options)[0]! });
    const shown = (await fx.get(`/api/casties/${uuid}/`, dee)).body.castie;
    expect(shown.friendCount).toBe(1);
    expect(Object.values(shown.friendForecasts)).toHaveLength(1);

    await fx.setPrivate(eve, true);
    const hidden = (await fx.get(`/api/casties/${uuid}/`, dee)).body.castie;
    expect(hidden.friendCount).toBe(0);
    expect(hidden.friendForecasts).toEqual({});
    const home = (await fx.get('/api/home/spicy/', dee)).body.casties as Record<string, { friendCount: number; friendPics: string[] }>;
    expect(home[uuid]).toMatchObject({ friendCount: 0, friendPics: [] });
    // The forecast still counts in the totals: only who made it is private.
    expect(hidden.forecastsCount).toBe(1);
  });
});

