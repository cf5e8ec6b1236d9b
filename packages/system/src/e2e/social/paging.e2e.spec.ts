import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { badPagingQueries, pageQuery, walkPages } from '../../testing/paging.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let hub: TestUser;
let n = 0;
/** A new user whose last name sorts by `last` (unique handles keep ties apart). */
const person = (last: string) => sys.signUp({ email: `p${++n}x${Date.now()}@example.com`, password: 'secret1', handle: `p${n}x${Math.random().toString(36).slice(2, 6)}`, firstName: 'Pat', lastName: last });
async function befriend(a: TestUser, b: TestUser): Promise<void> {
  expect((await sys.post(`/api/add-frodad/${b.handle}/`, {}, a)).status).toBe(200);
  await eventually(async () => expect((await sys.post(`/api/frodad-requests/${a.handle}/accept/`, {}, b)).status).toBe(200));
  // The accept is b's write: a's reads wait for a's own writes only, so a sees it eventually.
  await eventually(async () => expect(requestKeys((await sys.get('/api/frodad-requests/', a)).body)).not.toContain(b.handle));
}

beforeAll(async () => {
  sys = await TestSystem.start();
  hub = await sys.signUp();
  // Twelve frodads, pairs sharing a last name (the id breaks the tie).
  for (let i = 0; i < 12; i++) await befriend(hub, await person(`Mid${String(Math.floor(i / 2)).padStart(2, '0')}`));
  // Twelve pending requests, six received and six sent, pairs at the same instant.
  for (let i = 0; i < 12; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    const other = await person('Pending');
    if (i % 3 === 0) expect((await sys.post(`/api/add-frodad/${hub.handle}/`, {}, other)).status).toBe(200);
    else expect((await sys.post(`/api/add-frodad/${other.handle}/`, {}, hub)).status).toBe(200);
  }
}, 120_000);
afterAll(() => sys.close());

const frodadKeys = (b: Record<string, unknown>) => Object.keys(b.myFrodads as object);
const requestKeys = (b: Record<string, unknown>) => [...((b.requests_received as { handle: string }[] | null) ?? []), ...((b.requests_sent as { handle: string }[] | null) ?? [])].map((r) => r.handle);

describe('paging myFrodads', () => {
  it('without paging parameters answers every frodad, with no paging fields', async () => {
    const whole = await sys.get(`/api/profile/${hub.handle}/frodads/`, hub);
    expect(frodadKeys(whole.body)).toHaveLength(12);
    expect(whole.body).not.toHaveProperty('has_more');
  });

  it('walks every frodad once by last name while new frodads arrive before and after the cursor', async () => {
    const before = frodadKeys((await sys.get(`/api/profile/${hub.handle}/frodads/`, hub)).body);
    const walked = await walkPages(
      (c) => sys.get(`/api/profile/${hub.handle}/frodads/${pageQuery(5, c)}`, hub),
      frodadKeys,
      async (i) => befriend(hub, await person(i % 2 === 0 ? 'Aaa' : 'Zzz')),
    );
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
    expect(walked.ids.filter((h) => before.includes(h))).toEqual(before);
    expect(walked.pages[0]!.ids).toHaveLength(5);
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries.filter((q) => !q.includes('not-a-key'))) {
      const res = await sys.get(`/api/profile/${hub.handle}/frodads/${q}`, hub);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});

describe('paging frodad requests', () => {
  it('without paging parameters answers both lists whole, with no paging fields', async () => {
    const whole = await sys.get('/api/frodad-requests/', hub);
    expect(whole.body).toMatchObject({ number_received: 4, number_sent: 8 });
    expect(whole.body).not.toHaveProperty('has_more');
  });

  it('walks every request once, newest first, while new requests arrive at the head', async () => {
    const all = requestKeys((await sys.get('/api/frodad-requests/', hub)).body);
    const walked = await walkPages(
      (c) => sys.get(`/api/frodad-requests/${pageQuery(5, c)}`, hub),
      requestKeys,
      async () => {
        sys.clock.advance(1);
        expect((await sys.post(`/api/add-frodad/${hub.handle}/`, {}, await person('Late'))).status).toBe(200);
      },
    );
    expect([...walked.ids].sort()).toEqual([...all].sort());
    expect(walked.pages.map((p) => p.ids.length)).toEqual([5, 5, 2]);
    // The late requests are other people's writes: hub sees the last one once social applied it.
    await eventually(async () => {
      const first = (await sys.get('/api/frodad-requests/?limit=2', hub)).body;
      expect(first).toMatchObject({ number_received: 2, number_sent: 0, requests_sent: null, has_more: true });
    });
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries) {
      const res = await sys.get(`/api/frodad-requests/${q}`, hub);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});
