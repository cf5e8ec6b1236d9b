import { api } from '@castie/contracts';
import { newUser, TestSystem } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

describe('preferences through the gateway', () => {
  it('turns privacy on and off, with booleans sent as strings', async () => {
    const user = await sys.signUp();
    for (const [sent, expected] of [['True', true], ['0', false], ['on', true], ['false', false]] as const) {
      const res = await sys.post('/api/preferences/', { is_private: sent }, user);
      expect(api.identity.setPreferences.response.parse(res.body)).toEqual({ status: 200, message: 'data has been successfully updated', is_private: expected });
      expect((await sys.get('/api/preferences', user)).body).toEqual({ status: 200, is_private: expected });
    }
  });

  it('says nothing changed when privacy already has that value', async () => {
    const user = await sys.signUp();
    expect((await sys.post('/api/preferences/', { is_private: 'false' }, user)).body).toEqual({ status: 200, message: 'nothing has changed- no data to update', is_private: false });
  });

  it('refuses a privacy value that is not a boolean', async () => {
    const user = await sys.signUp();
    const res = await sys.post('/api/preferences/', { is_private: 'maybe' }, user);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_type: 'missing_request_data', error_message: 'is_private must be true or false' });
  });

  it('changes the e-mail: the old credentials stop at once, the new ones work, the old address is free', async () => {
    const user = await sys.signUp();
    expect((await sys.get('/api/preferences/edit/email/', user)).body).toEqual({ status: 200, email: user.email });
    const newEmail = newUser('moved').email;
    const res = await sys.post('/api/preferences/edit/email/', { email: newEmail }, user);
    expect(res.body).toEqual({ status: 200, message: 'email has been successfully updated', new_email: newEmail, new_username: newEmail });
    expect((await sys.get('/api/preferences/', user)).status).toBe(401);
    const moved = { ...user, email: newEmail };
    expect((await sys.get('/api/preferences/edit/email/', moved)).body).toEqual({ status: 200, email: newEmail });
    expect((await sys.post('/api/signup/email/', { email: user.email })).status).toBe(200);
  });

  it('refuses an e-mail that belongs to another account', async () => {
    const other = await sys.signUp();
    const user = await sys.signUp();
    const res = await sys.post('/api/preferences/edit/email/', { email: other.email }, user);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_type: 'email_not_unique', error_message: 'the email address provided is already associated with a Cassie account. it cannot be used again.' });
  });

  it('changes the password: the old one fails on the very next request', async () => {
    const user = await sys.signUp();
    // Warm the verified-credentials cache first, so the test proves it is dropped.
    expect((await sys.get('/api/preferences/', user)).status).toBe(200);
    const res = await sys.post('/api/preferences/edit/password/', { password: 'newpass9' }, user);
    expect(res.body).toEqual({ status: 200, message: 'password has been successfully updated' });
    expect((await sys.get('/api/preferences/', user)).status).toBe(401);
    expect((await sys.get('/api/preferences/', { ...user, password: 'newpass9' })).status).toBe(200);
  });

  it('changes the password with credentials in the body (new_password)', async () => {
    const user = await sys.signUp();
    const res = await sys.post('/api/preferences/edit/password/', { username: user.email, password: user.password, new_password: 'bodypass1' });
    expect(res.body).toEqual({ status: 200, message: 'password has been successfully updated' });
    expect((await sys.get('/api/preferences/', { ...user, password: 'bodypass1' })).status).toBe(200);
  });

  it('never returns hash material for the password', async () => {
    const user = await sys.signUp();
    const res = await sys.get('/api/preferences/edit/password/', user);
    expect(res.body).toEqual({ status: 200, password: '********' });
    expect(res.text).not.toMatch(/argon2/);
  });
});
