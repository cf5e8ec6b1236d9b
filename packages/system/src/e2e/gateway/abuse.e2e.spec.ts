import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { argon2idHasher } from '@castie/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';

// Abuse limits (hardening review, finding 2): failed credentials lock the account and the client
// address with exponential back-off, password-reset mails and sign-ups are limited, every user
// has a request budget; unknown and known e-mails cost the same work. The numbers are in the
// README ("Abuse limits").
let sys: TestSystem;
let verifications = 0;
const hasher = argon2idHasher({ memoryCost: 1024, timeCost: 1 });

beforeAll(async () => {
  sys = await TestSystem.start({
    env: { USER_REQUESTS_PER_MINUTE: '40' },
    passwords: { hash: (p) => hasher.hash(p), verify: (h, p) => (verifications++, hasher.verify(h, p)) },
  });
});
afterAll(() => sys.close());

const wrong = (u: TestUser) => ({ ...u, password: 'not-the-password' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('failed credentials', () => {
  it('lock the account after 5 failures with 429 and Retry-After, even for the right password, then let it in; each further failure doubles the lock', async () => {
    const ada = await sys.signUp();
    for (let i = 0; i < 5; i++) expect((await sys.get('/api/preferences/', wrong(ada))).status).toBe(401);
    const locked = await sys.get('/api/preferences/', ada);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ status: 429, error_type: 'too_many_requests' });
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(2);
    await sleep(2100);
    expect((await sys.get('/api/preferences/', ada)).status).toBe(200);
    // The sixth failure in the window locks for twice as long.
    expect((await sys.get('/api/preferences/', wrong(ada))).status).toBe(401);
    expect(Number((await sys.get('/api/preferences/', ada)).headers['retry-after'])).toBeGreaterThan(2);
  }, 20_000);

  it('count failures against one account however its e-mail is spelled (spaces around it, capitals), as identity reads it', async () => {
    const ada = await sys.signUp();
    const spellings = [` ${ada.email}`, `${ada.email} `, ada.email.toUpperCase(), `  ${ada.email}`, `\t${ada.email}`];
    for (const email of spellings) expect((await sys.get('/api/preferences/', { ...wrong(ada), email })).status, JSON.stringify(email)).toBe(401);
    expect((await sys.get('/api/preferences/', ada)).status).toBe(429);
    expect((await sys.get('/api/preferences/', { ...ada, email: ` ${ada.email.toUpperCase()} ` })).status).toBe(429);
  });

  it('lock a client address after 20 failures on any accounts; others elsewhere are not affected', async () => {
    const attacker = '192.0.2.66';
    const victims = await Promise.all(Array.from({ length: 4 }, () => sys.signUp()));
    for (let i = 0; i < 20; i++) {
      const res = await sys.request('GET', '/api/preferences/', { user: wrong(victims[i % 4]!), from: attacker });
      expect(res.status).toBe(401);
    }
    const someone = await sys.signUp();
    expect((await sys.request('GET', '/api/preferences/', { user: someone, from: attacker })).status).toBe(429);
    expect((await sys.get('/api/preferences/', someone)).status).toBe(200);
  });

  it('an unknown e-mail costs an argon2 check, exactly like a wrong password', async () => {
    const known = await sys.signUp();
    const before = verifications;
    expect((await sys.get('/api/preferences/', wrong(known))).status).toBe(401);
    const forKnown = verifications - before;
    expect((await sys.get('/api/preferences/', newUser('nobody'))).status).toBe(401);
    expect(verifications - before - forKnown).toBe(forKnown);
    expect(forKnown).toBe(1);
  });
});

describe('repeated requests', () => {
  it('password-reset mails: 3 per e-mail address per hour', async () => {
    const bob = await sys.signUp();
    const outbox = join(sys.dataDir, 'outbox');
    const mails = () => readdirSync(outbox).length;
    const before = (() => {
      try {
        return mails();
      } catch {
        return 0;
      }
    })();
    for (let i = 0; i < 3; i++) expect((await sys.request('POST', '/password_reset/', { form: { email: bob.email }, from: `198.51.100.${i + 1}` })).status).toBe(200);
    const fourth = await sys.request('POST', '/password_reset/', { form: { email: bob.email }, from: '198.51.100.9' });
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(3500);
    expect(mails() - before).toBe(3);
  });

  it('sign-up steps: 60 per client address per hour', async () => {
    const from = '203.0.113.7';
    for (let i = 0; i < 60; i++) expect((await sys.request('POST', '/api/signup/email/', { form: { email: newUser('many').email }, from })).status).toBe(200);
    const refused = await sys.request('POST', '/api/signup/email/', { form: { email: newUser('many').email }, from });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error_type: 'too_many_requests' });
    expect((await sys.request('POST', '/api/signup/email/', { form: { email: newUser('other').email }, from: '203.0.113.8' })).status).toBe(200);
  });

  it("a user's request budget (here 40 per minute) answers 429 past it, for that user only", async () => {
    const [cyd, dan] = [await sys.signUp(), await sys.signUp()];
    let status = 200;
    let sent = 0;
    while (status === 200 && sent < 100) {
      status = (await sys.get('/api/preferences/', cyd)).status;
      sent++;
    }
    expect(status).toBe(429);
    expect(sent).toBe(41);
    expect((await sys.get('/api/preferences/', dan)).status).toBe(200);
  });
});
