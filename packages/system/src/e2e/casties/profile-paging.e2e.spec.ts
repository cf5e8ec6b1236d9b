import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { badPagingQueries, pageQuery, walkPages } from '../../testing/paging.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let ann: TestUser;
let bob: TestUser;
let made = 0;
async function newCastie(): Promise<string> {
  const res = await sys.post('/api/casties/create/', { group_slug: 'pages', poll_type: 'Open', question: `Question ${++made}?`, answer_type: 'Write-in answers', display_created_by: 'true' }, ann);
  expect(res.status).toBe(200);
  return res.body.castie_uuid as string;
}
async function forecast(uuid: string): Promise<void> {
  await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: 'yes' }, bob)).status).toBe(200));
  // Bob's next read waits until the read models hold his forecast; ann's reads wait for her own
  // writes only, so from then on she sees it too.
  expect((await sys.get(`/api/profile/${bob.handle}/stats/?ids_only=True`, bob)).status).toBe(200);
}

beforeAll(async () => {
  sys = await TestSystem.start();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'pages', groupName: 'Pages', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  [ann, bob] = [await sys.signUp(), await sys.signUp()];
  for (const u of [ann, bob]) await sys.post('/api/groups/pages/follow/', {}, u);
  // Twelve Casties and forecasts, pairs at the same instant (the id breaks the tie).
  for (let i = 0; i < 12; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    await forecast(await newCastie());
  }
}, 60_000);
afterAll(() => sys.close());

const ids = (key: string) => (body: Record<string, unknown>) => body[key] as string[];
const between = async () => {
  sys.clock.advance(1);
  await forecast(await newCastie());
};

describe.each([
  { list: 'myCasties', path: () => `/api/profile/${ann.handle}/mycasties/` },
  { list: 'myForecasts', path: () => `/api/profile/${bob.handle}/stats/` },
])('paging $list of a profile', ({ list, path }) => {
  it('without paging parameters answers the whole list, with no paging fields', async () => {
    const whole = await sys.get(path(), ann);
    expect(Object.keys(whole.body[list] as object)).toHaveLength(made);
    expect(whole.body).not.toHaveProperty('has_more');
    expect(whole.body).not.toHaveProperty('next_before');
    const idsOnly = await sys.get(`${path()}?ids_only=True`, ann);
    expect(idsOnly.body[list]).toHaveLength(made);
  });

  it('walks every item once, newest first, while new ones arrive at the head', async () => {
    const before = (await sys.get(`${path()}?ids_only=True`, ann)).body[list] as string[];
    const walked = await walkPages((cursor) => sys.get(`${path()}${pageQuery(5, cursor, '&ids_only=True')}`, ann), ids(list), between);
    expect(walked.ids).toEqual(before);
    expect(new Set(walked.ids).size).toBe(before.length);
    expect(walked.pages.slice(0, -1).every((p) => p.ids.length === 5)).toBe(true);
    // Full objects page the same way.
    const full = await walkPages((cursor) => sys.get(`${path()}${pageQuery(4, cursor)}`, ann), (b) => Object.keys(b[list] as object));
    expect(full.ids).toHaveLength(made);
    expect(new Set(full.ids).size).toBe(made);
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries) {
      const res = await sys.get(`${path()}${q}`, ann);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});
