import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, SOCIAL_TOPIC } from '@castie/contracts';
import { backgroundCheckpoints } from '@castie/platform/sqlite/background-checkpoints';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem, type TestUser } from '../../testing/harness.ts';
import { labelSets, sample } from '../../testing/prometheus.ts';

// What Prometheus scrapes from the embedded process: one registry for the gateway and every
// service (labels carry the service), present and moving as the system works.
let sys: TestSystem;
let ada: TestUser;

beforeAll(async () => {
  sys = await TestSystem.start();
  ada = await sys.signUp();
});
afterAll(() => sys.close());

const scrape = async (): Promise<string> => {
  const res = await sys.request('GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
};

describe('GET /metrics', () => {
  it('exposes the process metrics and every Castie metric, and answers HEAD without a body', async () => {
    const text = await scrape();
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) expect(text, name).toMatch(new RegExp(`^${name}`, 'm'));
    for (const name of ['castie_http_request_duration_seconds', 'castie_event_log_append_duration_seconds', 'castie_projection_lag_events', 'castie_dead_letters_total', 'castie_credential_cache_hits_total', 'castie_credential_cache_misses_total', 'castie_repeated_answers_hits_total', 'castie_repeated_answers_misses_total', 'castie_sqlite_checkpoint_failures_total']) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    const head = await sys.request('HEAD', '/metrics');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('a request counts once in its route histogram, at the gateway and at the service that answered', async () => {
    const labels = { method: 'GET', route: '/api/preferences/', status_class: '2xx' };
    const before = await scrape();
    expect((await sys.get('/api/preferences/', ada)).status).toBe(200);
    const after = await scrape();
    const count = (text: string, service: string) => sample(text, 'castie_http_request_duration_seconds_count', { service, ...labels }) ?? 0;
    expect(count(after, 'gateway') - count(before, 'gateway')).toBe(1);
    expect(count(after, 'identity') - count(before, 'identity')).toBe(1);
  });

  it('routes are labelled by their pattern, never by the raw URL', async () => {
    const uuid = '0b7e2c1a-5f0e-4d4e-9a53-1c2d3e4f5a6b';
    await sys.get(`/api/casties/${uuid}/`, ada);
    await sys.get(`/no/such/page/${uuid}`);
    const sets = labelSets(await scrape(), 'castie_http_request_duration_seconds_count');
    expect(sets.some((l) => l.service === 'gateway' && l.route === '/api/casties/:uuid/')).toBe(true);
    expect(sets.some((l) => l.service === 'gateway' && l.route === 'unmatched' && l.status_class === '4xx')).toBe(true);
    expect(sets.filter((l) => Object.values(l).some((v) => v.includes(uuid)))).toEqual([]);
  });

  it('an append moves the append histogram of its topic', async () => {
    const appends = (text: string) => sample(text, 'castie_event_log_append_duration_seconds_count', { topic: IDENTITY_TOPIC, outcome: 'ok' }) ?? 0;
    const before = await scrape();
    const end = async () => (await sys.system.log.endOffsets(IDENTITY_TOPIC)).get(0) ?? 0;
    const endBefore = await end();
    // A sign-up appends its account to the identity topic.
    await sys.signUp();
    expect(await end()).toBeGreaterThan(endBefore);
    expect(appends(await scrape())).toBeGreaterThan(appends(before));
  });

  it('counts hits and misses of the verified-credentials caches, in the gateway and in identity', async () => {
    const count = (text: string, outcome: 'hits' | 'misses', service: string) => sample(text, `castie_credential_cache_${outcome}_total`, { service }) ?? 0;
    const deltas = (from: string, to: string) => ({
      gateway: { hits: count(to, 'hits', 'gateway') - count(from, 'hits', 'gateway'), misses: count(to, 'misses', 'gateway') - count(from, 'misses', 'gateway') },
      identity: { hits: count(to, 'hits', 'identity') - count(from, 'hits', 'identity'), misses: count(to, 'misses', 'identity') - count(from, 'misses', 'identity') },
    });
    await sys.get('/api/preferences/', ada);
    const before = await scrape();
    // The same credentials again: kept by the gateway, identity not asked.
    await sys.get('/api/preferences/', ada);
    const after = await scrape();
    expect(deltas(before, after)).toEqual({ gateway: { hits: 1, misses: 0 }, identity: { hits: 0, misses: 0 } });
    // A change to the account renews its credential stamp: the gateway asks identity again,
    // which finds the password verified for this login (no argon2id run).
    expect((await sys.post('/api/preferences/', { is_private: 'true' }, ada)).status).toBe(200);
    const changed = await scrape();
    await sys.get('/api/preferences/', ada);
    expect(deltas(changed, await scrape())).toEqual({ gateway: { hits: 0, misses: 1 }, identity: { hits: 1, misses: 0 } });
    // A wrong password: asked of identity, checked with argon2id.
    const wrongBefore = await scrape();
    expect((await sys.get('/api/preferences/', { ...ada, password: 'not-the-password' })).status).toBe(401);
    expect(deltas(wrongBefore, await scrape())).toEqual({ gateway: { hits: 0, misses: 1 }, identity: { hits: 0, misses: 1 } });
  });

  it('counts the home pages given again, and those made anew after a change', async () => {
    const count = (text: string, outcome: 'hits' | 'misses') => sample(text, `castie_repeated_answers_${outcome}_total`, { service: 'casties' }) ?? 0;
    const casties = sys.system.services.get('casties')!.readModels!;
    const settled = async () => expect(await casties.catchUp([IDENTITY_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC, SOCIAL_TOPIC])).toBe(true);
    await settled();
    await sys.get('/api/home/new/', ada);
    const before = await scrape();
    // Nothing changed since: the same page again.
    expect((await sys.get('/api/home/new/', ada)).status).toBe(200);
    const again = await scrape();
    expect([count(again, 'hits') - count(before, 'hits'), count(again, 'misses') - count(before, 'misses')]).toEqual([1, 0]);
    // A new account changes the service's copy of people: the page is made anew.
    await sys.signUp();
    await settled();
    expect((await sys.get('/api/home/new/', ada)).status).toBe(200);
    const after = await scrape();
    expect([count(after, 'hits') - count(again, 'hits'), count(after, 'misses') - count(again, 'misses')]).toEqual([0, 1]);
  });

  it('a poison record counts as a dead letter of each group that reads its topic', async () => {
    const letters = (text: string) => sample(text, 'castie_dead_letters_total', { service: 'social', group: 'social-read' }) ?? 0;
    const before = letters(await scrape());
    // Not an event at all: it breaks the contract of the social topic.
    await sys.system.log.append(SOCIAL_TOPIC, [{ key: 'poison', value: 'not an event' }]);
    const social = sys.system.services.get('social')!.readModels!;
    expect(await social.catchUp([SOCIAL_TOPIC])).toBe(true);
    const text = await scrape();
    expect(letters(text) - before).toBe(1);
    expect(sample(text, 'castie_event_log_append_duration_seconds_count', { topic: 'social-read.dead-letter', outcome: 'ok' })).toBe(1);
    // The runner went on: nothing of the social topic is left behind.
    expect(sample(text, 'castie_projection_lag_events', { service: 'social', projection: 'friendships' })).toBe(0);
  });

  it('a database file the checkpoint thread cannot checkpoint counts as a failure of that file, by name', async () => {
    const failures = (text: string) => sample(text, 'castie_sqlite_checkpoint_failures_total', { file: 'vanished.db' }) ?? 0;
    const before = failures(await scrape());
    // A file deleted with its directory under a running process: the thread cannot open it.
    const stop = backgroundCheckpoints.watch(join(tmpdir(), `castie-no-such-dir-${process.pid}`, 'vanished.db'));
    try {
      await expect.poll(async () => failures(await scrape()) - before, { timeout: 5000 }).toBe(1);
      const text = await scrape();
      expect(labelSets(text, 'castie_sqlite_checkpoint_failures_total').every((l) => !l.file?.includes('/'))).toBe(true);
    } finally {
      await stop();
    }
  });
});
