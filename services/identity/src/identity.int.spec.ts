import { api, ErrorBodySchema, IDENTITY_LOGINS_TOPIC, IDENTITY_TOPIC, identityEvents, internalHeaders, type Endpoint } from '@castie/contracts';
import { createMemoryCache, ManualClock } from '@castie/platform';
import { createFileEventLog, type FileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { createOutboxMailer } from '@castie/platform/embedded/outbox-mailer';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIdentityApp } from './app.ts';
import { argon2idHasher } from './sign-in/passwords.ts';

// The identity service alone, through its HTTP contract (inject), on embedded adapters with a
// fixed clock: what the gateway sends (JSON bodies, trusted user headers) and what comes back.
let dir: string;
let log: FileEventLog;
let app: FastifyInstance;
const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-identity-'));
  log = await createFileEventLog({ dir: join(dir, 'log') });
  app = await buildIdentityApp({
    accounts: await createLogEventStore({ log, topic: IDENTITY_TOPIC }),
    logins: await createLogEventStore({ log, topic: IDENTITY_LOGINS_TOPIC }),
    clock,
    mailer: createOutboxMailer({ dir: join(dir, 'outbox') }),
    passwords: argon2idHasher({ memoryCost: 1024, timeCost: 1 }),
    secret: 'int-test-secret-0123456789',
    publicUrl: 'http://localhost',
    cache: createMemoryCache(),
    checkResponses: true,
  });
});
afterAll(async () => {
  await app.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

const call = async <E extends Endpoint>(endpoint: E, payload: Record<string, unknown>, headers: Record<string, string> = {}, url = endpoint.paths[0]!) => {
  const res = await app.inject({ method: endpoint.method, url, headers, ...(endpoint.method === 'POST' ? { payload } : {}) });
  const body = res.json() as Record<string, unknown>;
  return { res, body, ok: res.statusCode === 200 ? endpoint.response.parse(body) : null, error: res.statusCode === 200 ? null : ErrorBodySchema.parse(body) };
};

async function signUp(email: string, handle: string) {
  await call(api.identity.signupPassword, { email, password: 'pw1234' });
  await call(api.identity.signupHandle, { email, handle, first_name: 'Ada', last_name: 'Lovelace' });
  const done = await call(api.identity.signupPicture, { email, handle });
  expect(done.ok).not.toBeNull();
  const auth = await app.inject({ method: 'POST', url: '/internal/authenticate', payload: { email, password: 'pw1234' } });
  return (auth.json() as { user: { userId: string; handle: string; email: string } }).user;
}

const as = (u: { userId: string; handle: string; email: string }) => ({ [internalHeaders.userId]: u.userId, [internalHeaders.handle]: u.handle, [internalHeaders.email]: u.email });

describe('identity service contract', () => {
  it('authenticates complete accounts only, with the e-mail in any case', async () => {
    const user = await signUp('int1@example.com', 'intone');
    expect(user).toEqual({ userId: expect.stringMatching(/^[0-9a-f]{32}$/), handle: 'intone', email: 'int1@example.com' });
    const upper = await app.inject({ method: 'POST', url: '/internal/authenticate', payload: { email: 'INT1@example.com', password: 'pw1234' } });
    expect(upper.statusCode).toBe(200);
    const wrong = await app.inject({ method: 'POST', url: '/internal/authenticate', payload: { email: 'int1@example.com', password: 'nope' } });
    expect(wrong.statusCode).toBe(401);
    await call(api.identity.signupPassword, { email: 'half@example.com', password: 'pw1234' });
    expect((await app.inject({ method: 'POST', url: '/internal/authenticate', payload: { email: 'half@example.com', password: 'pw1234' } })).statusCode).toBe(401);
  });

  it('vouches for credentials under a stamp that every change to the login or the account replaces', async () => {
    const user = await signUp('int4@example.com', 'intfour');
    const stampOf = async (email: string, password: string) => {
      const res = await app.inject({ method: 'POST', url: '/internal/authenticate', payload: { email, password } });
      return res.statusCode === 200 ? (res.json() as { stamp: string | null }).stamp : 'refused';
    };
    const first = await stampOf(user.email, 'pw1234');
    expect(first).toEqual(expect.any(String));
    expect(await stampOf(user.email, 'pw1234')).toBe(first);
    const seen = new Set([first]);
    const h = as(user);
    const changes: [string, () => Promise<unknown>, string, string][] = [
      ['privacy', () => call(api.identity.setPreferences, { is_private: 'True' }, h), user.email, 'pw1234'],
      ['handle', () => call(api.identity.editProfile, { handle: 'intfourb' }, h), user.email, 'pw1234'],
      ['password', () => call(api.identity.setPassword, { password: 'pw5678' }, h), user.email, 'pw5678'],
      ['e-mail', () => call(api.identity.setEmail, { email: 'int4b@example.com' }, h), 'int4b@example.com', 'pw5678'],
    ];
    for (const [what, change, email, password] of changes) {
      await change();
      const stamp = await stampOf(email, password);
      expect(stamp, what).toEqual(expect.any(String));
      expect(seen.has(stamp!), `a new stamp after the ${what} change`).toBe(false);
      seen.add(stamp!);
    }
  });

  it('refuses user endpoints without the gateway headers', async () => {
    const res = await call(api.identity.getPreferences, {});
    expect(res.res.statusCode).toBe(401);
    expect(res.error?.error_type).toBe('authentication_failed');
  });

  it('answers every user endpoint within its contract', async () => {
    const user = await signUp('int2@example.com', 'inttwo');
    const h = as(user);
    expect((await call(api.identity.getPreferences, {}, h)).ok).toEqual({ status: 200, is_private: false });
    expect((await call(api.identity.setPreferences, { is_private: 'True' }, h)).ok).toMatchObject({ is_private: true });
    expect((await call(api.identity.getEmail, {}, h)).ok).toEqual({ status: 200, email: 'int2@example.com' });
    expect((await call(api.identity.getPassword, {}, h)).ok).toEqual({ status: 200, password: '********' });
    expect((await call(api.identity.getProfileEdit, {}, h, '/api/profile/inttwo/edit/')).ok).toMatchObject({ handle: 'inttwo', firstName: 'Ada' });
    expect((await call(api.identity.editProfile, { city: 'Paris' }, h)).ok).toEqual({ status: 200, message: 'data has been successfully updated', updated_fields: ['city'] });
  });

  it('publishes identity events that other services can read, without credentials in them', async () => {
    const user = await signUp('int3@example.com', 'intthree');
    const seen: string[] = [];
    const sub = await log.subscribe({
      group: 'int-test-reader',
      topics: [IDENTITY_TOPIC],
      startAt: () => 'earliest',
      handle: async (records) => {
        for (const r of records) {
          const envelope = JSON.parse(r.value);
          if (envelope.data.userId !== user.userId) continue;
          identityEvents.parse(envelope);
          seen.push(envelope.type);
          expect(r.value).not.toMatch(/argon2|passwordHash|int3@example\.com/);
        }
      },
    });
    const ends = await log.endOffsets(IDENTITY_TOPIC);
    expect(await sub.waitFor([{ topic: IDENTITY_TOPIC, partition: 0, offset: ends.get(0)! - 1 }], 5000)).toBe(true);
    await sub.stop();
    expect(seen).toEqual(['AccountOpened', 'ProfileNamed', 'SignUpCompleted']);
  });
});
