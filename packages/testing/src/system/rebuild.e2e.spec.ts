import { eventually, TestSystem, type TestUser } from './harness.ts';
import { afterAll, describe, expect, it } from 'vitest';

// Rule 7: read models can always be rebuilt from the log, to the same state. A story through
// every service, then the same questions asked of a fresh process that rebuilt everything.
const systems: TestSystem[] = [];
afterAll(async () => {
  for (const s of systems) await s.close({ keepData: s !== systems.at(-1) });
});

async function story(sys: TestSystem) {
  const [ada, bob, cyd] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
  await sys.post('/api/preferences/', { is_private: 'true' }, cyd);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'weather', groupName: 'Weather', groupInfoText: 'Rain or shine', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'club', groupName: 'Club', groupInfoText: 'Members only', requiresApproval: true, accessDeniedMessage: 'Ask us' })).status).toBe(200);
  for (const u of [ada, bob, cyd]) await sys.post('/api/groups/weather/follow/', {}, u);
  await sys.post('/api/groups/club/follow/', {}, bob);
  await sys.admin('POST', `/admin/groups/club/access/${bob.handle}/grant/`);
  await sys.post(`/api/add-frodad/${bob.handle}/`, {}, ada);
  await sys.post(`/api/frodad-requests/${ada.handle}/accept/`, {}, bob);
  await sys.post(`/api/add-frodad/${cyd.handle}/`, {}, ada);

  const end = new Date(sys.clock.now().getTime() + 3600_000);
  const created = await sys.post(
    '/api/casties/create/',
    { group_slug: 'weather', poll_type: 'Regular', closes_on_date: end.toISOString().slice(0, 10), closes_on_time: end.toISOString().slice(11, 16), question: 'Rain on Sunday?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' },
    ada,
  );
  expect(created.status, created.text).toBe(200);
  const uuid = created.body.castie_uuid as string;
  const writeIn = await sys.post('/api/casties/create/', { group_slug: 'weather', poll_type: 'Open', question: 'Top temperature in July?', answer_type: 'Write-in answers', display_created_by: 'false' }, bob);
  const options = Object.keys((await sys.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as object).map(Number);
  await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(options[0]) }, bob)).status).toBe(200));
  await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(options[1]) }, cyd)).status).toBe(200));
  await sys.post(`/api/casties/${writeIn.body.castie_uuid as string}/forecast/`, { forecast_text: 'about 35 degrees' }, ada);
  await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'Looks cloudy' }, bob);
  sys.clock.advance(2 * 3600);
  expect((await sys.post(`/api/casties/${uuid}/answer/`, { answer_id: String(options[0]) }, ada)).status).toBe(200);
  return { users: [ada, bob, cyd], uuid };
}

/** What people see, asked of every service. No endpoint here writes. */
async function snapshot(sys: TestSystem, users: TestUser[], uuid: string) {
  const out: Record<string, unknown> = {};
  for (const u of users) {
    for (const url of [
      '/api/home/spicy/',
      '/api/home/following/',
      '/api/home/new/',
      `/api/casties/${uuid}/`,
      `/api/casties/${uuid}/comments/`,
      '/api/groups/',
      '/api/groups/weather/',
      '/api/groups/club/?casties=False',
      '/api/groups/weather/followers/',
      '/api/leaderboard/',
      '/api/leaderboard/weather/',
      '/api/frodad-requests/',
      '/api/initialize/',
      '/api/hamburger/',
      '/api/search/people/?q=user',
      ...users.flatMap((p) => [`/api/profile/${p.handle}/stats/`, `/api/profile/${p.handle}/mycasties/`, `/api/profile/${p.handle}/groups/`, `/api/profile/${p.handle}/frodads/`]),
    ]) {
      const res = await sys.get(url, u);
      out[`${u.handle} GET ${url}`] = { status: res.status, body: res.body };
    }
  }
  return out;
}

describe('rebuilding every read model from the log', () => {
  it('a fresh process answers exactly what the first one did', async () => {
    const first = await TestSystem.start();
    systems.push(first);
    const { users, uuid } = await story(first);
    // Let every service's copy reach the end of the log before taking the picture.
    const before = await eventually(async () => {
      const a = await snapshot(first, users, uuid);
      expect(await snapshot(first, users, uuid)).toEqual(a);
      return a;
    });
    expect(Object.values(before).every((r) => (r as { status: number }).status === 200)).toBe(true);

    const now = first.clock.now();
    await first.system.close();
    const second = await TestSystem.start({ dataDir: first.dataDir, now });
    systems.push(second);
    expect(await snapshot(second, users, uuid)).toEqual(before);
  }, 60_000);
});
