import { api, NotificationSchema } from '@castie/contracts';
import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

type N = { notification_type: string; data: string; message: string; id: string | null };
const list = async (user: TestUser, query = '') => {
  const res = await sys.get(`/api/notifications/${query}`, user);
  expect(res.status).toBe(200);
  return res;
};
const initialize = async (user: TestUser) => api.notifications.initialize.response.parse((await sys.get('/api/initialize/', user)).body);

async function group(slug: string, requiresApproval = false) {
  const res = await sys.admin('POST', '/admin/groups/', { slug, groupName: `The ${slug}`, groupInfoText: 'info', requiresApproval, accessDeniedMessage: 'ask first' });
  expect(res.status).toBe(200);
}

async function castie(user: TestUser, slug: string, question: string, options: { closesInMinutes?: number } = {}) {
  const end = new Date(sys.clock.now().getTime() + (options.closesInMinutes ?? 60) * 60_000);
  const res = await sys.post(
    '/api/casties/create/',
    {
      group_slug: slug,
      poll_type: 'Regular',
      closes_on_date: end.toISOString().slice(0, 10),
      closes_on_time: end.toISOString().slice(11, 16),
      question,
      answer_type: 'Set answer options',
      answer_option: ['Yes', 'No'],
      display_created_by: 'true',
    },
    user,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.castie_uuid as string;
}

async function answerIds(user: TestUser, uuid: string): Promise<number[]> {
  const res = await sys.get(`/api/casties/${uuid}/answer/`, user);
  return Object.keys(res.body.answer_options as Record<string, string>).map(Number);
}

describe('notifications through the gateway', () => {
  it('friend requests: received, counted as new, read once listed, removed when accepted; the sender hears of it', async () => {
    const ann = await sys.signUp();
    const ben = await sys.signUp();
    expect(await initialize(ben)).toEqual({ status: 200, number_notifications: 0, needs_answer: false, number_needing_answer: 0 });

    await sys.post(`/api/add-frodad/${ben.handle}/`, {}, ann);
    await eventually(async () => expect((await initialize(ben)).number_notifications).toBe(1));
    const received = (await list(ben)).body.notifications as N[];
    expect(received.map((n) => NotificationSchema.parse(n))).toMatchObject([{ notification_type: 'friend-request-received', data: ann.handle, message: `@${ann.handle} has sent you a friendship request`, timesince_created: 'just now' }]);
    // Listing read it.
    expect((await initialize(ben)).number_notifications).toBe(0);

    await sys.post(`/api/frodad-requests/${ann.handle}/accept/`, {}, ben);
    expect(((await list(ben)).body.notifications as N[]).filter((n) => n.notification_type === 'friend-request-received')).toEqual([]);
    const annSees = await eventually(async () => {
      const seen = (await list(ann)).body.notifications as N[];
      expect(seen).toHaveLength(1);
      return seen;
    });
    expect(annSees).toMatchObject([{ notification_type: 'friend-request-accepted', data: ben.handle, message: `@${ben.handle} has accepted your friendship request` }]);
  });

  it('filters by type, one list per requested type', async () => {
    const ann = await sys.signUp();
    const ben = await sys.signUp();
    await sys.post(`/api/add-frodad/${ben.handle}/`, {}, ann);
    await eventually(async () => expect((await initialize(ben)).number_notifications).toBe(1));
    const res = await list(ben, '?notification_type=friend-request-received&notification_type=castie-answered');
    expect(Object.keys(res.body).sort()).toEqual(['castie-answered', 'friend-request-received', 'status']);
    expect(res.body['friend-request-received']).toHaveLength(1);
    expect(res.body['castie-answered']).toEqual([]);
    expect((await sys.get('/api/notifications/?notification_type=nonsense', ben)).body.error_type).toBe('missing_request_data');
  });

  it('a Castie: its creator hears of forecasts (one notification, counting), then that it needs an answer; forecasters hear of the answer', async () => {
    const slug = `notif${Date.now().toString(36)}`;
    await group(slug);
    const [cat, dan, eve] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
    for (const u of [cat, dan, eve]) expect((await sys.post(`/api/groups/${slug}/follow/`, {}, u)).status).toBe(200);
    const uuid = await castie(cat, slug, 'Will it rain tomorrow?');

    // Followers hear that the group has a new Castie; the creator does not.
    await eventually(async () =>
      expect((await list(dan)).body.notifications as N[]).toContainEqual(expect.objectContaining({ notification_type: 'new-casties', data: slug, message: `A new Castie was added to the The ${slug} group` })),
    );
    expect(((await list(cat)).body.notifications as N[]).filter((n) => n.notification_type === 'new-casties')).toEqual([]);

    const [yes, no] = await answerIds(cat, uuid);
    // Real time moves on between reading one's notifications and the next forecasts.
    sys.clock.advance(1);
    await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(yes) }, dan);
    sys.clock.advance(1);
    await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(no) }, eve);
    const forecasted = await eventually(async () => {
      const found = ((await list(cat)).body.notifications as N[]).filter((n) => n.notification_type === 'castie-forecasted');
      expect(found).toHaveLength(1);
      expect(found[0]!.message).toMatch(/and 1 other/);
      return found;
    });
    expect(forecasted[0]).toMatchObject({ data: uuid, message: `@${eve.handle} and 1 other forecasted your Castie "Will it rain tomorrow?"` });

    // Time passes: the Castie ended and waits for its creator's answer (one collective, always unread).
    sys.clock.advance(2 * 3600);
    expect(await initialize(cat)).toMatchObject({ needs_answer: true, number_needing_answer: 1, number_notifications: 1 });
    const needs = (await list(cat)).body.notifications as N[];
    expect(needs[0]).toMatchObject({ id: null, notification_type: 'castie-needs-answer', data: uuid, message: 'Your Castie has ended- time to answer it!' });
    expect(await initialize(cat)).toMatchObject({ needs_answer: true, number_notifications: 1 });

    expect((await sys.post(`/api/casties/${uuid}/answer/`, { answer_id: String(yes) }, cat)).status).toBe(200);
    expect(await initialize(cat)).toMatchObject({ needs_answer: false, number_needing_answer: 0 });
    for (const u of [dan, eve]) {
      await eventually(async () =>
        expect(((await list(u)).body.notifications as N[]).find((n) => n.notification_type === 'castie-answered')).toMatchObject({ data: uuid, message: 'The answer to "Will it rain tomorrow?" is in- see how you did!' }),
      );
    }
  });

  it('friends who follow the group hear of a friend forecasting; the creator hears it once', async () => {
    const slug = `friends${Date.now().toString(36)}`;
    await group(slug);
    const [fay, gus, hal, jo] = [await sys.signUp(), await sys.signUp(), await sys.signUp(), await sys.signUp()];
    for (const friend of [gus, hal, jo]) {
      await sys.post(`/api/add-frodad/${friend.handle}/`, {}, fay);
      await sys.post(`/api/frodad-requests/${fay.handle}/accept/`, {}, friend);
    }
    for (const u of [fay, gus, jo]) await sys.post(`/api/groups/${slug}/follow/`, {}, u);
    const uuid = await castie(gus, slug, 'Best pizza topping?');
    const [first] = await answerIds(gus, uuid);
    await eventually(async () => expect(((await sys.get('/api/profile/' + fay.handle + '/frodads/', jo)).body.profileInfo as { frodadsNumber: number }).frodadsNumber).toBe(3));
    await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String(first) }, fay);
    // jo: a frodad of fay who follows the group.
    await eventually(async () =>
      expect((await list(jo)).body.notifications as N[]).toContainEqual(expect.objectContaining({ notification_type: 'castie-friend-forecasted', data: uuid, message: `@${fay.handle} forecasted "Best pizza topping?"` })),
    );
    // The same event reached everyone: gus, the creator, has the forecasted one only; hal does not follow the group.
    const gusList = (await list(gus)).body.notifications as N[];
    expect(gusList.filter((n) => n.notification_type === 'castie-forecasted')).toHaveLength(1);
    expect(gusList.filter((n) => n.notification_type === 'castie-friend-forecasted')).toEqual([]);
    expect(((await list(hal)).body.notifications as N[]).filter((n) => n.notification_type === 'castie-friend-forecasted')).toEqual([]);
  });

  it("the indicator counts what happened since the list was last read: frodads' forecasts and comments, forecasts on one's Casties, new Casties", async () => {
    const slug = `count${Date.now().toString(36)}`;
    await group(slug);
    const [lea, max, ned] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
    await sys.post(`/api/add-frodad/${max.handle}/`, {}, lea);
    await sys.post(`/api/frodad-requests/${lea.handle}/accept/`, {}, max);
    for (const u of [lea, max, ned]) expect((await sys.post(`/api/groups/${slug}/follow/`, {}, u)).status).toBe(200);
    // lea reads that max accepted her request: nothing is new for her.
    await eventually(async () => expect((await initialize(lea)).number_notifications).toBe(1));
    await list(lea);
    expect((await initialize(lea)).number_notifications).toBe(0);
    await eventually(async () => expect(((await sys.get('/api/profile/' + lea.handle + '/frodads/', max)).body.profileInfo as { frodadsNumber: number }).frodadsNumber).toBe(1));

    sys.clock.advance(1);
    const leas = await castie(lea, slug, 'Snow by Friday?');
    const neds = await castie(ned, slug, 'Tea or coffee?');
    for (const uuid of [leas, neds]) expect((await sys.post(`/api/casties/${uuid}/forecast/`, { answer_id: String((await answerIds(max, uuid))[0]) }, max)).status).toBe(200);
    // ned's new Castie in the group, max's forecast on lea's Castie, max's forecast on ned's: three, as the list shows.
    await eventually(async () => {
      expect((await initialize(lea)).number_notifications).toBe(3);
      expect(((await list(lea)).body.notifications as N[]).map((n) => n.notification_type).sort()).toEqual(['castie-forecasted', 'castie-friend-forecasted', 'friend-request-accepted', 'new-casties']);
    });
    expect((await initialize(lea)).number_notifications).toBe(0);

    // After the list was read, only what comes next counts: a notification with a new event counts once.
    sys.clock.advance(60);
    expect((await sys.post(`/api/casties/${neds}/comment/`, { commentText: 'coffee, always' }, max)).status).toBe(200);
    await eventually(async () => expect((await initialize(lea)).number_notifications).toBe(1));
    sys.clock.advance(60);
    await castie(ned, slug, 'Rain on Sunday?');
    await eventually(async () => expect((await initialize(lea)).number_notifications).toBe(2));
    sys.clock.advance(60);
    expect((await sys.post(`/api/casties/${leas}/forecast/`, { answer_id: String((await answerIds(ned, leas))[1]) }, ned)).status).toBe(200);
    await eventually(async () => expect((await initialize(lea)).number_notifications).toBe(3));
    // Those three lead the list; max's forecast on ned's Castie, read before, follows them.
    const listed = (await list(lea)).body.notifications as N[];
    expect(listed.map((n) => `${n.notification_type}:${n.data}`)).toEqual([`castie-forecasted:${leas}`, `new-casties:${slug}`, `castie-friend-commented:${neds}`, `castie-friend-forecasted:${neds}`, `friend-request-accepted:${max.handle}`]);
    expect(listed[0]!.message).toBe(`@${ned.handle} forecasted your Castie "Snow by Friday?"`);
    expect(listed[1]!.message).toBe(`A new Castie was added to the The ${slug} group`);
    expect((await initialize(lea)).number_notifications).toBe(0);
  });

  it('group access granted is a notification', async () => {
    const slug = `closed${Date.now().toString(36)}`;
    await group(slug, true);
    const ivy = await sys.signUp();
    await sys.post(`/api/groups/${slug}/follow/`, {}, ivy);
    expect((await sys.admin('POST', `/admin/groups/${slug}/access/${ivy.handle}/grant/`)).status).toBe(200);
    await eventually(async () => expect((await list(ivy)).body.notifications as N[]).toContainEqual(expect.objectContaining({ notification_type: 'group-access-granted', data: slug, message: `You have been approved to join the The ${slug} group` })));
  });

  it('login counts what is unseen since the given date and time, and returns the handle', async () => {
    const jan = await sys.signUp();
    const kim = await sys.signUp();
    await sys.post(`/api/add-frodad/${kim.handle}/`, {}, jan);
    await eventually(async () => expect((await initialize(kim)).number_notifications).toBe(1));
    const now = sys.clock.now();
    const before = new Date(now.getTime() - 3600_000);
    const res = await sys.post('/api/login/', { last_seen_date: before.toISOString().slice(0, 10), last_seen_time: before.toISOString().slice(11, 19) }, kim);
    expect(res.body).toEqual({ status: 200, profile_handle: kim.handle, number_notifications: 1, needs_answer: false, number_needing_answer: 0 });
    const after = new Date(now.getTime() + 3600_000);
    const later = await sys.post('/api/login/', { last_seen_date: after.toISOString().slice(0, 10), last_seen_time: after.toISOString().slice(11, 19) }, kim);
    expect(later.body.number_notifications).toBe(0);
  });
});
