import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger, newUser, TestSystem, type CapturedLog } from '../../testing/harness.ts';

// Nothing a person types to prove who they are, nor their address, may land in the operators'
// logs: the log of a whole sign-up, login and password-reset flow holds none of it.
let sys: TestSystem;
let log: CapturedLog;
beforeAll(async () => {
  log = capturedLogger('trace');
  sys = await TestSystem.start({ logger: log.logger });
});
afterAll(() => sys.close());

async function resetLinkFor(email: string): Promise<string> {
  const dir = join(sys.dataDir, 'outbox');
  const files = (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();
  const mails = await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as { to: string; text: string }));
  const text = mails.filter((m) => m.to === email).at(-1)?.text ?? '';
  const link = /http:\/\/[^/]+(\/password_reset\/[A-Za-z0-9_-]+\/)/.exec(text)?.[1];
  if (!link) throw new Error(`no reset link was mailed to ${email}`);
  return link;
}

describe('the logs hold no credentials, tokens or e-mail addresses', () => {
  it('a sign-up, logins, a failed login and a password reset leave none of them in any log line', async () => {
    const user = await sys.signUp(newUser('redact'));
    const basic = `Basic ${Buffer.from(`${user.email}:${user.password}`).toString('base64')}`;
    expect((await sys.request('POST', '/api/login/', { user, form: { last_seen_date: '2026-03-01', last_seen_time: '12:00:00' } })).status).toBe(200);
    // Credentials in the body instead of a header.
    expect((await sys.request('GET', '/api/preferences/', { form: { username: user.email, password: user.password } })).status).toBe(200);
    expect((await sys.get('/api/preferences/', { ...user, password: 'wrong-password-9' })).status).toBe(401);
    // A client that puts them in the query string of an unknown endpoint.
    expect((await sys.get(`/api/nowhere/?username=${encodeURIComponent(user.email)}&password=${user.password}`)).status).toBe(404);

    expect((await sys.post('/password_reset/', { email: user.email })).status).toBe(200);
    const link = await resetLinkFor(user.email);
    const token = /\/password_reset\/([A-Za-z0-9_-]+)\//.exec(link)![1]!;
    expect((await sys.get(link)).status).toBe(200);
    expect((await sys.request('HEAD', link)).status).toBe(200);
    expect((await sys.post(link, { password: 'fresh-password-7', password_confirm: 'fresh-password-7' })).text).toContain('Password changed');
    expect((await sys.get('/api/preferences/', { ...user, password: 'fresh-password-7' })).status).toBe(200);

    const text = log.text();
    // The log is there and tells what happened, with every request's id.
    expect(log.lines().length).toBeGreaterThan(20);
    expect(text).toContain('/password_reset/');
    const mailed = log.lines().filter((l) => l.msg === 'mail written to the outbox').at(-1) as { mail?: { to?: string } } | undefined;
    expect(mailed?.mail?.to).toBe('[email]');
    for (const secret of [user.password, 'wrong-password-9', 'fresh-password-7', token, user.email, encodeURIComponent(user.email), basic.slice('Basic '.length)]) {
      expect(text, `the log shows ${secret}`).not.toContain(secret);
    }
    expect(text.toLowerCase()).not.toMatch(/"authorization":"(basic|bearer)/);
    expect(text).not.toMatch(/[A-Za-z0-9._%+-]+@example\.com/);
  });

  it('support creating an account leaves neither its password nor any part of its e-mail address in the log', async () => {
    const person = newUser('support');
    // An apostrophe is allowed in an address (o'brien@…): no part of it may stay readable.
    const email = `o'brien.${person.handle}@example.com`;
    const created = await sys.admin('POST', '/admin/accounts/', { email, handle: person.handle, first_name: 'Sam', last_name: 'Obrien', password: 'support-pw-31' });
    expect(created.status, created.text).toBe(200);
    expect((await sys.get('/api/preferences/', { ...person, email, password: 'support-pw-31' })).status).toBe(200);
    // The reset mail to that address is logged (to whom, not the address).
    expect((await sys.post('/password_reset/', { email })).status).toBe(200);
    await resetLinkFor(email);
    const text = log.text();
    const mailed = log.lines().filter((l) => l.msg === 'mail written to the outbox').at(-1) as { mail?: { to?: string } } | undefined;
    expect(mailed?.mail?.to).toBe('[email]');
    for (const secret of ['support-pw-31', `brien.${person.handle}`]) expect(text, `the log shows ${secret}`).not.toContain(secret);
  });

  it('an admin request leaves no bearer token in the log', async () => {
    expect((await sys.admin('GET', '/admin/groups/nosuchgroup/')).status).toBe(404);
    expect(log.text()).not.toContain(sys.adminToken);
  });
});
