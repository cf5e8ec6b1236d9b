import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';

// The services' projections run in a thread of their own once caught up at start
// (system/src/projections-thread): the requests read what it commits, and if it ends, the
// projections go on on the event loop from their last commit.

let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;
let cleo: TestUser;

beforeAll(async () => {
  sys = await TestSystem.start();
  [ada, bob, cleo] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'tides', groupName: 'Tides', groupInfoText: 'high or low', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  for (const u of [ada, bob, cleo]) expect((await sys.post('/api/groups/tides/follow/', {}, u)).status).toBe(200);
}, 30_000);
afterAll(() => sys?.close(), 30_000);

/** A new Castie of Ada's, once Cleo can read it, and the id of its first answer option. */
async function castie(question: string): Promise<{ uuid: string; yes: string }> {
  const created = await sys.post(
    '/api/casties/create/',
    { group_slug: 'tides', poll_type: 'Regular', closes_on_date: '2026-03-09', closes_on_time: '08:00', question, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'True' },
    ada,
  );
  expect(created.body).toMatchObject({ status: 200 });
  const uuid = created.body.castie_uuid as string;
  const options = (await sys.get(`/api/casties/${uuid}/answer/`, ada)).body.answer_options as Record<string, string>;
  await eventually(async () => expect((await sys.get(`/api/casties/${uuid}/`, cleo)).status).toBe(200));
  return { uuid, yes: Object.entries(options).find(([, text]) => text === 'Yes')![0] };
}

const forecastsSeenBy = async (user: TestUser, uuid: string) => ((await sys.get(`/api/casties/${uuid}/`, user)).body.castie as { forecastsCount: number }).forecastsCount;

describe("the services' projections, in a thread of their own", () => {
  it('show a reader who read a Castie before the forecasts others place on it, and its author at once', async () => {
    expect(sys.system.projectionsThread?.worker).toBeTruthy();
    const { uuid, yes } = await castie('High tide at noon?');
    // Read (and kept by the casties service) before anyone forecast.
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);

    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, bob)).status).toBe(200);
    await eventually(async () => expect(await forecastsSeenBy(cleo, uuid)).toBe(1));
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, ada)).status).toBe(200);
    expect(await forecastsSeenBy(ada, uuid)).toBe(2);
  });

  it('once the thread ended, go on on the event loop from their last commit', async () => {
    const thread = sys.system.projectionsThread!;
    const worker = thread.worker!;
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    await worker.terminate();
    expect(await exited).toBe(1);

    const { uuid, yes } = await castie('Low tide at dusk?');
    expect(await forecastsSeenBy(cleo, uuid)).toBe(0);
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, bob)).status).toBe(200);
    await eventually(async () => expect(await forecastsSeenBy(cleo, uuid)).toBe(1));
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: yes }, ada)).status).toBe(200);
    expect(await forecastsSeenBy(ada, uuid)).toBe(2);
    // Every service is ready.
    const ready = await sys.request('GET', '/readyz');
    expect(ready.status, ready.text).toBe(200);
  });
});
