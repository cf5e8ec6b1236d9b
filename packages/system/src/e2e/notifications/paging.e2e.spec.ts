import { internalHeaders, OwnDataExportSchema, type Notification } from '@castie/contracts';
import { NOTIFICATIONS } from '@castie/notifications';
import type { DocumentStore } from '@castie/platform';
import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { badPagingQueries, pageQuery, walkPages } from '../../testing/paging.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let hub: TestUser;
let notificationsStore: DocumentStore;
const senders: string[] = [];
async function requestFrom(): Promise<string> {
  const u = await sys.signUp();
  await eventually(async () => expect((await sys.post(`/api/add-frodad/${hub.handle}/`, {}, u)).status).toBe(200));
  // hub's reads wait for hub's own writes only, and u's for the request but not for u's sign-up
  // (its steps carry no credentials): the request shows once the notifications service applied
  // both, which it reads as two topics, each in batches of its own. Another's write shows
  // eventually: waited for in hub's export, which marks nothing read.
  await eventually(async () => {
    const exported = OwnDataExportSchema.parse(JSON.parse((await sys.get('/api/export/', hub)).text));
    expect(exported.notifications.map((n) => n.data)).toContain(u.handle);
  });
  return u.handle;
}

beforeAll(async () => {
  sys = await TestSystem.start({
    wrapDocuments: (service, store) => {
      if (service === 'notifications') notificationsStore = store;
      return store;
    },
  });
  hub = await sys.signUp();
  // 110 friend requests (more than the whole list's 100), pairs at the same instant.
  for (let i = 0; i < 110; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    senders.push(await requestFrom());
  }
  await eventually(async () => expect((await sys.get('/api/initialize/', hub)).body.number_notifications).toBe(100));
}, 180_000);
afterAll(() => sys.close());

const data = (b: Record<string, unknown>) => (b.notifications as { data: string }[]).map((n) => n.data);

describe('paging notifications', () => {
  it('without paging parameters answers the newest 100, with no paging fields', async () => {
    const whole = await sys.get('/api/notifications/', hub);
    expect([...data(whole.body)].sort()).toEqual(senders.slice(-100).sort());
    expect(whole.body).not.toHaveProperty('has_more');
    expect(whole.body).not.toHaveProperty('next_before');
  });

  it('reaches every notification, older than the newest 100 too, once, while new ones arrive at the head', async () => {
    const walked = await walkPages(
      (c) => sys.get(`/api/notifications/${pageQuery(30, c)}`, hub),
      data,
      async () => {
        sys.clock.advance(1);
        await requestFrom();
      },
    );
    expect(walked.pages.map((p) => p.ids.length)).toEqual([30, 30, 30, 20]);
    expect(new Set(walked.ids).size).toBe(110);
    expect([...walked.ids].sort()).toEqual([...senders].sort());
    // Newest first: the last page holds the oldest requests.
    expect(walked.pages.at(-1)!.ids).toContain(senders[0]);
  });

  it('pages a filtered list the same way', async () => {
    const walked = await walkPages((c) => sys.get(`/api/notifications/${pageQuery(50, c, '&notification_type=friend-request-received')}`, hub), (b) => (b['friend-request-received'] as { data: string }[]).map((n) => n.data));
    expect(walked.ids.length).toBe(senders.length + 3);
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
  });

  it("the own-data export holds every notification (beyond the newest 100), as walking the pages gives them, and marks none read", async () => {
    const before = (await sys.get('/api/initialize/', hub)).body;
    const key = (n: Notification) => JSON.stringify([n.id, n.notification_type, n.data, n.message, n.created_on_date, n.created_on_time]);
    const walked = await walkPages(
      (c) => sys.get(`/api/notifications/${pageQuery(100, c)}`, hub),
      (b) => (b.notifications as Notification[]).map(key),
    );
    const res = await sys.get('/api/export/', hub);
    expect(res.status).toBe(200);
    const exported = OwnDataExportSchema.parse(JSON.parse(res.text)).notifications.map(key);
    expect(exported.length).toBeGreaterThan(100);
    expect(new Set(exported).size).toBe(exported.length);
    expect([...exported].sort()).toEqual([...walked.ids].sort());
    expect((await sys.get('/api/initialize/', hub)).body).toEqual(before);
  });

  it("the export's internal pages walk the stored notifications by their index, newest first, once each", async () => {
    const userId = (await notificationsStore.collection(NOTIFICATIONS).findOne({ type: 'friend-request-received' }))!.userId;
    const app = sys.system.services.get('notifications')!.app;
    const pages: Notification[][] = [];
    let after: string | null = null;
    do {
      const res: { statusCode: number; json: () => unknown } = await app.inject({ method: 'GET', url: `/internal/export/notifications/?limit=7${after ? `&after=${encodeURIComponent(after)}` : ''}`, headers: { [internalHeaders.userId]: userId } });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { items: Notification[]; next: string | null };
      pages.push(body.items);
      after = body.next;
    } while (after !== null && pages.length < 100);
    const ids = pages.flat().map((n) => n.id);
    expect(pages.length).toBeGreaterThan(15);
    expect(ids.length).toBeGreaterThan(110);
    expect(new Set(ids).size).toBe(ids.length);
    // Stored ones newest first across pages.
    const times = pages.flat().map((n) => `${n.created_on_date} ${n.created_on_time}`);
    expect([...times].sort().reverse()).toEqual(times);
    const bad = await app.inject({ method: 'GET', url: '/internal/export/notifications/?after=nobar', headers: { [internalHeaders.userId]: userId } });
    expect(bad.statusCode).toBe(400);
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries) {
      const res = await sys.get(`/api/notifications/${q}`, hub);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});
