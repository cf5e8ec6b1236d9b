import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';
import { badPagingQueries, pageQuery, walkPages } from '../../testing/paging.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
let ann: TestUser;
let uuid: string;
beforeAll(async () => {
  sys = await TestSystem.start();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'chat', groupName: 'Chat', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  ann = await sys.signUp();
  await sys.post('/api/groups/chat/follow/', {}, ann);
  const created = await sys.post('/api/casties/create/', { group_slug: 'chat', poll_type: 'Open', question: 'Which way?', answer_type: 'Write-in answers', display_created_by: 'true' }, ann);
  uuid = created.body.castie_uuid as string;
  // Twelve comments, pairs of them at the same instant (the id breaks the tie).
  for (let i = 0; i < 12; i++) {
    if (i % 2 === 0) sys.clock.advance(1);
    await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/comment/`, { commentText: `comment ${i}` }, ann)).status).toBe(200));
  }
});
afterAll(() => sys.close());

const commentIds = (body: Record<string, unknown>) => (body.comments as { commentUUID: string }[]).map((c) => c.commentUUID);

describe('paging the comments of a Castie', () => {
  it('without paging parameters answers the whole list as before, with no paging fields', async () => {
    const whole = await sys.get(`/api/casties/${uuid}/comments/`, ann);
    expect(whole.status).toBe(200);
    expect(whole.body.numberComments).toBe(12);
    expect(whole.body).not.toHaveProperty('has_more');
    expect(whole.body).not.toHaveProperty('next_before');
    expect((whole.body.comments as { commentText: string }[])[0]?.commentText).toMatch(/comment 1[01]/);
  });

  it('walks every comment once, newest first, while new comments arrive at the head', async () => {
    const before = commentIds((await sys.get(`/api/casties/${uuid}/comments/`, ann)).body);
    const walked = await walkPages(
      (cursor) => sys.get(`/api/casties/${uuid}/comments/${pageQuery(5, cursor)}`, ann),
      commentIds,
      async (i) => {
        sys.clock.advance(1);
        expect((await sys.post(`/api/casties/${uuid}/comment/`, { commentText: `new ${i}` }, ann)).status).toBe(200);
      },
    );
    expect(walked.pages.map((p) => p.ids.length)).toEqual([5, 5, 2]);
    expect(walked.ids).toEqual(before);
    expect(walked.pages.at(-1)).toMatchObject({ hasMore: false, nextBefore: null });
    const first = await sys.get(`/api/casties/${uuid}/comments/?limit=2`, ann);
    expect(first.body).toMatchObject({ numberComments: 2, has_more: true });
    expect((first.body.comments as { commentText: string }[])[0]?.commentText).toBe('new 1');
  });

  it('refuses a limit out of 1..100 and a malformed cursor with 400', async () => {
    for (const q of badPagingQueries) {
      const res = await sys.get(`/api/casties/${uuid}/comments/${q}`, ann);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ status: 400, error_type: 'missing_request_data' });
    }
  });
});
