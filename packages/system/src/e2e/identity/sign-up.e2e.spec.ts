import { api, ErrorBodySchema } from '@castie/contracts';
import { newUser, TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const expectError = (res: { status: number; body: unknown }, status: number, errorType: string) => {
  expect(res.status).toBe(status);
  expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status, error_type: errorType });
};

describe('sign-up through the gateway', () => {
  it('walks the four steps and the new user can sign in', async () => {
    const user = newUser('ada');
    const email = await sys.postAs(user, '/api/signup/email/', { email: user.email });
    expect(api.identity.signupEmail.response.parse(email.body)).toEqual({ status: 200, email: user.email, message: 'email is unique- proceed to the password screen' });

    const password = await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password });
    expect(api.identity.signupPassword.response.parse(password.body)).toEqual({ status: 200, email: user.email, username: user.email, message: 'User has been created. proceed to the name screen.' });

    // Not complete yet: the credentials do not work until the picture step.
    expectError(await sys.get('/api/preferences/', user), 401, 'authentication_failed');

    const handle = await sys.postAs(user, '/api/signup/handle/', { email: user.email, handle: user.handle, first_name: 'Ada', last_name: 'Lovelace' });
    expect(handle.body).toEqual({ status: 200, handle: user.handle, message: 'proceed to the picture screen' });

    const picture = await sys.postAs(user, '/api/signup/picture/', { email: user.email, handle: user.handle });
    expect(picture.body).toEqual({ status: 200, email: user.email, handle: user.handle, message: 'Sign up complete- now show me the home page' });

    const prefs = await sys.get('/api/preferences/', user);
    expect(prefs.body).toEqual({ status: 200, is_private: false });
  });

  it("the new user's first request sees their account while the answering service's read models lag (their own writes)", async () => {
    // The casties service's read models held behind the log: its boards do not know the account yet.
    await sys.holdingReadModels('casties', async (resume) => {
      const user = await sys.signUp(newUser('cyd'));
      let answered = false;
      const board = sys.get('/api/leaderboard/', user).finally(() => (answered = true));
      board.catch(() => undefined);
      // Not a board without them: the request waits for the sign-up it follows.
      await new Promise((r) => setTimeout(r, 200));
      expect(answered).toBe(false);
      resume();
      const res = await board;
      expect(res.status, res.text).toBe(200);
      expect((res.body.leaderboard_profiles as { handle: string }[]).map((p) => p.handle)).toContain(user.handle);
    });
  });

  it('treats e-mail addresses case-insensitively and refuses a taken one', async () => {
    const user = await sys.signUp(newUser('bob'));
    const again = await sys.postAs(user, '/api/signup/email/', { email: user.email.toUpperCase() });
    expectError(again, 400, 'email_not_unique');
    expect(again.body.error_message).toBe('the email address provided is already associated with a Cassie account. it cannot be used to create a new account.');
    expectError(await sys.postAs(user, '/api/signup/password/', { email: user.email, password: 'another' }), 400, 'email_not_unique');
  });

  it('refuses a handle already in use, whatever its case', async () => {
    const taken = await sys.signUp(newUser('cat'));
    const user = newUser('dan');
    await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password });
    const res = await sys.postAs(user, '/api/signup/handle/', { email: user.email, handle: taken.handle.toUpperCase(), first_name: 'Dan', last_name: 'Brown' });
    expectError(res, 400, 'handle_not_unique');
    expect(res.body.error_message).toBe('the handle provided is already associated with a Cassie account');
  });

  it.each([
    ['a short handle', { handle: 'ab' }, /handle must have at least 3 characters/],
    ['a handle with @', { handle: 'ab@c' }, /handle/],
    ['a handle with /', { handle: 'ab/c' }, /handle/],
    ['a name with spaces', { first_name: 'Mary Ann' }, /first_name/],
  ])('refuses %s with account_not_created', async (_what, override, message) => {
    const user = newUser('eve');
    await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password });
    const res = await sys.postAs(user, '/api/signup/handle/', { email: user.email, handle: user.handle, first_name: 'Eve', last_name: 'Smith', ...override });
    expectError(res, 400, 'account_not_created');
    expect(res.body.error_message).toMatch(message);
  });

  it('refuses a password under 4 characters and an invalid e-mail', async () => {
    const user = newUser('fay');
    const short = await sys.postAs(user, '/api/signup/password/', { email: user.email, password: 'abc' });
    expectError(short, 400, 'account_not_created');
    expect(short.body.error_message).toMatch(/password/);
    expectError(await sys.post('/api/signup/email/', { email: 'not-an-email' }), 400, 'account_not_created');
  });

  it('a retried password step with the same password resumes the sign-up; another password is refused', async () => {
    const user = newUser('retry');
    expect((await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password })).status).toBe(200);
    const again = await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password });
    expect(again.body).toEqual({ status: 200, email: user.email, username: user.email, message: 'User has been created. proceed to the name screen.' });
    expect((await sys.postAs(user, '/api/signup/password/', { email: user.email, password: 'someone-else' })).body.error_type).toBe('email_not_unique');
    await sys.postAs(user, '/api/signup/handle/', { email: user.email, handle: user.handle, first_name: 'Re', last_name: 'Try' });
    expect((await sys.postAs(user, '/api/signup/picture/', { email: user.email, handle: user.handle })).status).toBe(200);
    // Once complete, the step is closed even with the right password.
    expect((await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password })).body.error_type).toBe('email_not_unique');
    expect((await sys.get('/api/preferences/', user)).status).toBe(200);
  });

  it('names the missing parameter', async () => {
    const res = await sys.post('/api/signup/password/', { email: newUser().email });
    expectError(res, 400, 'missing_request_data');
    expect(res.body.error_message).toBe('password is required');
  });

  it('deletes the data of an abandoned sign-up and frees e-mail and handle', async () => {
    const user = newUser('gus');
    await sys.postAs(user, '/api/signup/password/', { email: user.email, password: user.password });
    await sys.postAs(user, '/api/signup/handle/', { email: user.email, handle: user.handle, first_name: 'Gus', last_name: 'Grey' });
    const res = await sys.postAs(user, '/api/signup/incomplete/', { email: user.email });
    expect(res.body).toEqual({ status: 200, message: 'user data has been deleted' });
    // Both can be used again by someone else.
    await sys.signUp({ ...newUser('hal'), email: user.email, handle: user.handle });
  });

  it('does not let the incomplete endpoint delete a complete account', async () => {
    const user = await sys.signUp(newUser('ian'));
    expectError(await sys.postAs(user, '/api/signup/incomplete/', { email: user.email }), 400, 'not_allowed');
    expect((await sys.get('/api/preferences/', user)).status).toBe(200);
  });

  it('keeps e-mails unique when the same address signs up twelve times at once', async () => {
    const email = newUser('race').email;
    // Twelve devices at once.
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => sys.request('POST', '/api/signup/password/', { form: { email, password: `pass${i}` }, from: `10.9.9.${i + 1}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.body.error_type === 'email_not_unique')).toHaveLength(11);
  });

  it('keeps handles unique when twelve sign-ups claim one at once', async () => {
    const users = Array.from({ length: 12 }, () => newUser('claim'));
    for (const u of users) await sys.postAs(u, '/api/signup/password/', { email: u.email, password: u.password });
    const handle = newUser('wanted').handle;
    const results = await Promise.all(users.map((u) => sys.postAs(u, '/api/signup/handle/', { email: u.email, handle, first_name: 'A', last_name: 'B' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.body.error_type === 'handle_not_unique')).toHaveLength(11);
  });
});
