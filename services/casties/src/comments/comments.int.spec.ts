import { api } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CastiesFixture, type Person } from '../test-support/fixture.ts';
import { startAccountDeletedPolicy } from './account-deleted-policy.ts';
import { COMMENTS } from './read-model.ts';

let fx: CastiesFixture;
let people: Person[];
let uuid: string;

beforeAll(async () => {
  fx = await CastiesFixture.start();
  people = [];
  for (const name of ['ada', 'bob', 'cy', 'dan', 'eve']) people.push(await fx.person(name));
  await fx.group('sports');
  await fx.follow(people[0]!, 'sports');
  uuid = await fx.castie(people[0]!, { group_slug: 'sports', poll_type: 'Open', question: 'Rain tomorrow?', answer_type: 'Write-in answers', display_created_by: 'true' });
});
afterAll(() => fx.close());

describe('comments', () => {
  it('creates, lists newest first, counts and deletes by the author only', async () => {
    const [ada, bob] = people as [Person, Person];
    const first = await fx.post(`/api/casties/${uuid}/comment/`, ada, { commentText: ' first ' });
    expect(first.body).toEqual({ status: 200, handle: 'ada', commentText: 'first', comment: 'created successfully', commentUUID: expect.stringMatching(/^[0-9a-f]{32}$/), castieUUID: uuid });
    fx.clock.advance(60);
    await fx.post(`/api/casties/${uuid}/comment/`, bob, { commentText: 'second' });
    const list = api.casties.comments.response.parse((await fx.get(`/api/casties/${uuid}/comments/`, ada)).body);
    expect(list).toMatchObject({ numberComments: 2, uuid });
    expect(list.comments.map((c) => [c.handle, c.commentText])).toEqual([['bob', 'second'], ['ada', 'first']]);
    expect(list.comments[0]).toMatchObject({ commentDate: '2026-03-01', commentTime: '12:01:00.000000', isOffensive: false, firstName: 'Test' });
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).body.castie.commentsCount).toBe(2);

    expect((await fx.post(`/api/comments/${first.body.commentUUID}/delete/`, bob)).body).toMatchObject({ status: 400, error_type: 'not_allowed' });
    expect((await fx.post(`/api/comments/${first.body.commentUUID}/delete/`, ada)).body).toEqual({ status: 200, comment: 'deleted' });
    expect((await fx.get(`/api/casties/${uuid}/comments/`, ada)).body.numberComments).toBe(1);
    expect((await fx.get(`/api/casties/${uuid}/`, ada)).body.castie.commentsCount).toBe(1);
  });

  it('refuses empty and over-long comments', async () => {
    expect((await fx.post(`/api/casties/${uuid}/comment/`, people[1]!, { commentText: 'x'.repeat(501) })).body).toMatchObject({ status: 400, error_type: 'comment_not_created' });
    expect((await fx.post(`/api/casties/${uuid}/comment/`, people[1]!, {})).body).toMatchObject({ status: 400, error_type: 'comment_not_created' });
    expect((await fx.post(`/api/casties/${uuid}/comment/`, people[1]!, { commentText: 'x'.repeat(500) })).status).toBe(200);
  });

  it('hides a reported comment from its reporter at once and from everyone at three reporters', async () => {
    const [ada, bob, cy, dan, eve] = people as [Person, Person, Person, Person, Person];
    const rude = (await fx.post(`/api/casties/${uuid}/comment/`, eve, { commentText: 'rude' })).body.commentUUID as string;
    const shows = async (as: Person) => ((await fx.get(`/api/casties/${uuid}/comments/`, as)).body.comments as { commentUUID: string }[]).some((c) => c.commentUUID === rude);
    expect((await fx.post(`/api/report/comment/${rude}/`, bob)).body).toEqual({ status: 200, message: 'comment has been reported' });
    expect(await shows(bob)).toBe(false);
    expect(await shows(ada)).toBe(true);
    await fx.post(`/api/report/comment/${rude}/`, bob);
    await fx.post(`/api/report/comment/${rude}/`, cy);
    expect(await shows(ada)).toBe(true);
    await fx.post(`/api/report/comment/${rude}/`, dan);
    expect(await shows(ada)).toBe(false);
    expect(await shows(eve)).toBe(false);
  });

  it('reports Casties', async () => {
    expect((await fx.post(`/api/report/castie/${uuid}/`, people[2]!)).body).toEqual({ status: 200, message: 'castie has been reported' });
    expect((await fx.post('/api/report/castie/0123456789abcdef0123456789abcdef/', people[2]!)).status).toBe(404);
  });
});

describe('a deleted account', () => {
  it('loses every comment, those the read models had not counted when the deletion came too', async () => {
    const dan = people[3]!;
    const policy = await startAccountDeletedPolicy({ log: fx.log, store: await fx.store('casties'), documents: fx.documents, clock: fx.clock, readModels: fx.runner });
    try {
      await fx.post(`/api/casties/${uuid}/comment/`, dan, { commentText: 'counted' });
      // A comment accepted, then the deletion, while the read models stand still.
      await fx.runner.pause();
      const late = fx.post(`/api/casties/${uuid}/comment/`, dan, { commentText: 'not counted yet' });
      expect((await late).status).toBe(200);
      const deleting = fx.deleteAccount(dan);
      // The policy waits for the read models, in vain, then its batch comes again.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      fx.runner.resume();
      await deleting;
      // Deleted, as CommentDeleted events: none of them stands (lists hide a deleted author's anyway).
      await expect.poll(() => fx.documents.collection(COMMENTS).countDocuments({ userId: dan.userId, deleted: false }), { timeout: 10_000, interval: 200 }).toBe(0);
      expect(await fx.documents.collection(COMMENTS).countDocuments({ userId: dan.userId })).toBe(2);
    } finally {
      fx.runner.resume();
      await policy.stop();
    }
  }, 30_000);

  it('loses its comments after a record of identity that is not an event', async () => {
    const eve = people[4]!;
    const policy = await startAccountDeletedPolicy({ log: fx.log, store: await fx.store('casties'), documents: fx.documents, clock: fx.clock, readModels: fx.runner });
    try {
      await fx.post(`/api/casties/${uuid}/comment/`, eve, { commentText: 'before the junk' });
      await fx.log.append('identity', [{ key: `account-${eve.userId}`, value: 'not json {' }]);
      await fx.deleteAccount(eve);
      await expect.poll(() => fx.documents.collection(COMMENTS).countDocuments({ userId: eve.userId, deleted: false }), { timeout: 10_000, interval: 200 }).toBe(0);
    } finally {
      await policy.stop();
    }
  });
});
