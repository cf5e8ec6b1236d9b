import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An open-ended Castie answered by its creator at the moment someone forecasts it: the forecast is
// refused (the Castie ended) or accepted, and an accepted one earns its points everywhere a user
// looks, as any scored forecast does (services/casties/src/casties/late-forecasts-policy.ts).

let sys: TestSystem;
let host: TestUser;
const players: TestUser[] = [];
beforeAll(async () => {
  sys = await TestSystem.start();
  host = await sys.signUp();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'derby', groupName: 'Derby', groupInfoText: 'who wins', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  for (let i = 0; i < 12; i++) players.push(await sys.signUp());
  for (const u of [host, ...players]) expect((await sys.post('/api/groups/derby/follow/', {}, u)).status).toBe(200);
});
afterAll(() => sys.close());

describe('forecasts racing the answer of their open-ended Castie', () => {
  it('each is refused, or scored in the forecaster stats, notifications and leaderboard', async () => {
    const accepted: { uuid: string; player: TestUser }[] = [];
    for (const player of players) {
      const created = await sys.post('/api/casties/create/', { group_slug: 'derby', poll_type: 'Open', question: `Does ${player.handle} win?`, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'True' }, host);
      const uuid = created.body.castie_uuid as string;
      const options = (await sys.get(`/api/casties/${uuid}/answer/`, host)).body.answer_options as Record<string, string>;
      const yes = Object.entries(options).find(([, text]) => text === 'Yes')![0];
      const [answer, forecast] = await Promise.all([sys.post(`/api/casties/${uuid}/answer/`, { answer_id: yes }, host), sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, player)]);
      expect(answer.status).toBe(200);
      if (forecast.status === 200) accepted.push({ uuid, player });
      else expect(forecast.body.error_type).toBe('cannot_forecast');
    }
    for (const { uuid, player } of accepted) {
      // The only forecast, and right: 10 + round(90 × (1 − 1)) = 10 points.
      await eventually(async () => {
        const stats = await sys.get(`/api/profile/${player.handle}/stats/`, player);
        expect(Object.values(stats.body.myForecasts as Record<string, unknown>)).toEqual([expect.objectContaining({ uuid, is_correct: true, points_earned: 10 })]);
        const answered = (await sys.get('/api/notifications/?notification_type=castie-answered', player)).body['castie-answered'] as { data: string }[];
        expect(answered.map((n) => n.data)).toEqual([uuid]);
        const board = (await sys.get('/api/leaderboard/derby/', player)).body.leaderboard_profiles as { handle: string; xp: number }[];
        expect(board.find((e) => e.handle === player.handle)?.xp).toBe(10);
      }, 5000);
    }
  });
});
