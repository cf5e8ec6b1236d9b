import { TestSystem } from '../../testing/harness.ts';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

async function lastMailTo(email: string): Promise<{ to: string; text: string } | undefined> {
  const dir = join(sys.dataDir, 'outbox');
  const files = (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();
  const mails = await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as { to: string; text: string }));
  return mails.filter((m) => m.to === email).at(-1);
}

describe('password reset in the browser', () => {
  it('sends a link by e-mail; the link sets a new password once', async () => {
    const user = await sys.signUp();
    const page = await sys.get('/password_reset/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('<form method="post">');

    const sent = await sys.post('/password_reset/', { email: user.email });
    expect(sent.text).toContain('Check your e-mail');
    const mail = await lastMailTo(user.email);
    const link = /http:\/\/[^/]+(\/password_reset\/[A-Za-z0-9_-]+\/)/.exec(mail?.text ?? '')?.[1];
    expect(link).toBeDefined();

    expect((await sys.get(link!)).text).toContain('Choose a new password');
    expect((await sys.post(link!, { password: 'fresh1', password_confirm: 'other' })).status).toBe(400);
    const done = await sys.post(link!, { password: 'fresh1', password_confirm: 'fresh1' });
    expect(done.text).toContain('Password changed');
    expect((await sys.get('/api/preferences/', user)).status).toBe(401);
    expect((await sys.get('/api/preferences/', { ...user, password: 'fresh1' })).status).toBe(200);
    // Used once: the link is dead now.
    expect((await sys.post(link!, { password: 'again1', password_confirm: 'again1' })).text).toContain('does not work');
  });

  it('does not tell whether an address has an account', async () => {
    const res = await sys.post('/password_reset/', { email: 'nobody-at-all@example.com' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Check your e-mail');
    expect(await lastMailTo('nobody-at-all@example.com')).toBeUndefined();
  });

  it('a link expires after an hour', async () => {
    const user = await sys.signUp();
    await sys.post('/password_reset/', { email: user.email });
    const link = /http:\/\/[^/]+(\/password_reset\/[A-Za-z0-9_-]+\/)/.exec((await lastMailTo(user.email))?.text ?? '')?.[1];
    sys.clock.advance(3601);
    expect((await sys.get(link!)).status).toBe(400);
  });
});
