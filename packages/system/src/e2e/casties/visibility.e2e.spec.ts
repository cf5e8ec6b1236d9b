import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, TestSystem, type TestUser } from '../../testing/harness.ts';

// Who may see what of a Castie: a hidden creator stays hidden, and reporting follows the rule of
// reading (hardening review, findings 5 and 8).
let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;
let eve: TestUser;

const create = async (as: TestUser, group: string, fields: Record<string, string> = {}) => {
  const res = await sys.post('/api/casties/create/', { group_slug: group, poll_type: 'Open', question: 'Snow in May?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true', ...fields }, as);
  expect(res.status, res.text).toBe(200);
  return res.body.castie_uuid as string;
};

beforeAll(async () => {
  sys = await TestSystem.start();
  [ada, bob, eve] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'open', groupName: 'Open', groupInfoText: 'all', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'closed', groupName: 'Closed', groupInfoText: 'members', requiresApproval: true, accessDeniedMessage: 'ask' })).status).toBe(200);
  for (const u of [ada, bob, eve]) await sys.post('/api/groups/open/follow/', {}, u);
  for (const u of [ada, bob]) {
    await sys.post('/api/groups/closed/follow/', {}, u);
    await sys.admin('POST', `/admin/groups/closed/access/${u.handle}/grant/`);
  }
});
afterAll(() => sys.close());

describe('a Castie created a moment ago', () => {
  it('opens for someone else before the read models applied it (a link shared at once), never a 404', async () => {
    await sys.holdingReadModels('casties', async (resume) => {
      const uuid = await create(ada, 'open', { question: 'Shared at once?' });
      const closed = await create(ada, 'closed', { question: 'Members only?' });
      // The read model is held behind the log: the answer can only come once it applied the Castie.
      let answered = false;
      const opening = sys.get(`/api/casties/${uuid}/`, bob).finally(() => (answered = true));
      // Answered at once while the read model is held: a Castie that does not exist, and one
      // Eve may not see (its group needs approval), both 404 with no wait that would tell her
      // it exists.
      expect((await sys.get(`/api/casties/${'f'.repeat(32)}/`, bob)).status).toBe(404);
      expect((await sys.get(`/api/casties/${closed}/`, eve)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toBe(false);
      resume();
      const res = await opening;
      expect(res.status, res.text).toBe(200);
      expect((res.body.castie as { question: string }).question).toBe('Shared at once?');
    });
  });
});

describe('a creator who hides their handle', () => {
  it('is shown to nobody but themselves: in lists, in the detail, in search and on their profile', async () => {
    const uuid = await create(ada, 'open', { display_created_by: 'false', question: 'Hidden author quiz?' });
    const seenBy = async (u: TestUser) => {
      const home = (await sys.get('/api/home/new/', u)).body.casties as Record<string, { submitter: string; showUsername: boolean }>;
      const detail = (await sys.get(`/api/casties/${uuid}/`, u)).body.castie as { submitter: string };
      const search = (await sys.get('/api/search/casties/?q=hidden%20author', u)).body.search_results as Record<string, { submitter: string }>;
      const profile = (await sys.get(`/api/profile/${ada.handle}/mycasties/`, u)).body.myCasties as Record<string, unknown>;
      return { home: home[uuid]?.submitter, showUsername: home[uuid]?.showUsername, detail: detail.submitter, search: search[uuid]?.submitter, onProfile: uuid in profile };
    };
    // Bob wrote nothing: his lists show Ada's Castie once the read models applied it.
    await eventually(async () => expect(await seenBy(bob)).toEqual({ home: '', showUsername: false, detail: '', search: '', onProfile: false }));
    expect(await seenBy(ada)).toEqual({ home: ada.handle, showUsername: false, detail: ada.handle, search: ada.handle, onProfile: true });
    // A shown creator is shown to everyone.
    const shown = await create(ada, 'open', { question: 'Shown author quiz?' });
    expect(((await sys.get(`/api/casties/${shown}/`, bob)).body.castie as { submitter: string }).submitter).toBe(ada.handle);
  });
});

describe('reporting follows the rule of reading', () => {
  it('a comment on a Castie the reporter cannot see is unknown to them, like one that does not exist', async () => {
    const uuid = await create(ada, 'closed');
    const posted = await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'members only' }, bob);
    expect(posted.status).toBe(200);
    const commentId = posted.body.commentUUID as string;
    const outsider = await sys.post(`/api/report/comment/${commentId}/`, {}, eve);
    const unknown = await sys.post(`/api/report/comment/${'f'.repeat(32)}/`, {}, eve);
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual(unknown.body);
    expect((await sys.post(`/api/report/castie/${uuid}/`, {}, eve)).status).toBe(404);
  });

  it("outsiders' reports cannot hide a member's comment from the members", async () => {
    const uuid = await create(ada, 'closed');
    const commentId = (await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'still here' }, bob)).body.commentUUID as string;
    const strangers = [eve, await sys.signUp(), await sys.signUp()];
    for (const s of strangers) expect((await sys.post(`/api/report/comment/${commentId}/`, {}, s)).status).toBe(404);
    const comments = (await sys.get(`/api/casties/${uuid}/comments/`, ada)).body.comments as { commentUUID: string }[];
    expect(comments.map((c) => c.commentUUID)).toContain(commentId);
    // A member may report it (and no longer sees it).
    expect((await sys.post(`/api/report/comment/${commentId}/`, {}, ada)).body).toMatchObject({ status: 200, message: 'comment has been reported' });
  });
});
