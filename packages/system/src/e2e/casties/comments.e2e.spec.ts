import { eventually, TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

describe('comments of a deleted account', () => {
  it('vanish from the list and from commentsCount alike', async () => {
    expect((await sys.admin('POST', '/admin/groups/', { slug: 'talk', groupName: 'Talk', groupInfoText: '', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
    const [ann, bob] = [await sys.signUp(), await sys.signUp()];
    for (const u of [ann, bob]) await sys.post('/api/groups/talk/follow/', {}, u);
    const created = await sys.post('/api/casties/create/', { group_slug: 'talk', poll_type: 'Open', question: 'Tea or coffee?', answer_type: 'Write-in answers', display_created_by: 'true' }, ann);
    const uuid = created.body.castie_uuid as string;
    await eventually(async () => expect((await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'Tea, obviously' }, bob)).status).toBe(200));
    await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'Coffee' }, ann);
    await eventually(async () => expect((await sys.get(`/api/casties/${uuid}/`, ann)).body.castie).toMatchObject({ commentsCount: 2 }));

    expect((await sys.post(`/api/profile/${bob.handle}/delete/`, {}, bob)).status).toBe(200);
    await eventually(async () => {
      const comments = (await sys.get(`/api/casties/${uuid}/comments/`, ann)).body;
      expect(comments).toMatchObject({ numberComments: 1, comments: [{ handle: ann.handle, commentText: 'Coffee' }] });
      expect((await sys.get(`/api/casties/${uuid}/`, ann)).body.castie).toMatchObject({ commentsCount: 1 });
    });
  });
});
