import { TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  sys = await TestSystem.start();
  ada = await sys.signUp();
  bob = await sys.signUp();
  const group = await sys.admin('POST', '/admin/groups/', { slug: 'weather', groupName: 'Weather', groupInfoText: 'rain or shine', requiresApproval: false, accessDeniedMessage: '' });
  expect(group.status).toBe(200);
  for (const u of [ada, bob]) expect((await sys.post('/api/groups/weather/follow/', {}, u)).status).toBe(200);
});
afterAll(() => sys.close());

describe('a Castie through the gateway, from creation to points', () => {
  it('creates, forecasts, ends with time, answers and pays the points', async () => {
    const created = await sys.post(
      '/api/casties/create/',
      { group_slug: 'weather', poll_type: 'Regular', closes_on_date: '2026-03-02', closes_on_time: '08:00', question: 'Rain in Paris tomorrow?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'True' },
      ada,
    );
    expect(created.body).toMatchObject({ status: 200, castie: 'created successfully' });
    const uuid = created.body.castie_uuid as string;

    // The creator sees it at once (session consistency through the gateway), others eventually.
    expect((await sys.get('/api/home/?ids=true', ada)).body.castie_ids).toContain(uuid);
    await vi.waitFor(async () => expect((await sys.get('/api/home/?ids=true', bob)).body.castie_ids).toContain(uuid));
    const options = (await sys.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as Record<string, string>;
    const [yes, no] = ['Yes', 'No'].map((t) => Object.entries(options).find(([, text]) => text === t)![0]);

    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes! }, bob)).body).toMatchObject({ status: 200, message: 'forecast successfully recorded', user_forecast_text: 'Yes' });
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: no! }, ada)).status).toBe(200);
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: no! }, bob)).body).toMatchObject({ status: 400, error_type: 'cannot_forecast' });

    sys.clock.advance(24 * 3600);
    expect((await sys.get('/api/casties/needsanswer/', ada)).body).toEqual({ status: 200, needs_answer: true, number_needing_answer: 1 });
    const answered = await sys.post(`/api/casties/${uuid}/answer/`, { answer_id: yes! }, ada);
    expect(answered.body).toMatchObject({ status: 200, castie: { answerSubmitted: true, correctIndex: 'Yes' } });
    expect((await sys.get('/api/casties/needsanswer/', ada)).body).toMatchObject({ needs_answer: false, number_needing_answer: 0 });

    // Bob was right against half the crowd: 10 + round(90 × 0.5) = 55 points.
    const stats = await sys.get(`/api/profile/${bob.handle}/stats/`, bob);
    expect(Object.values(stats.body.myForecasts as Record<string, unknown>)).toEqual([expect.objectContaining({ uuid, points_earned: 55, is_correct: true })]);
    const board = await sys.get('/api/leaderboard/weather/', ada);
    expect(board.body.leaderboard_profiles).toEqual([expect.objectContaining({ handle: bob.handle, xp: 55 }), expect.objectContaining({ handle: ada.handle, xp: 0 })]);
  });
});
