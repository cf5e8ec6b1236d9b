import { HealthSchema, IDENTITY_TOPIC, ReadinessSchema, type ReadModelLag } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, newUser, TestSystem, type TestUser } from '../../testing/harness.ts';
import { sample } from '../../testing/prometheus.ts';

// Probes and operators: /healthz (alive), /readyz (read models caught up with the log, within
// READY_MAX_LAG_EVENTS), in the embedded process, where the gateway's readiness covers every service.
// API_KEYS is set: the operations endpoints must answer without one all the same.
const API_KEY = 'ops-test-key';
let sys: TestSystem;

beforeAll(async () => {
  sys = await TestSystem.start({ env: { API_KEYS: API_KEY, READY_MAX_LAG_EVENTS: '0' } });
});
afterAll(() => sys.close());

const withKey = { 'api-key': API_KEY };

async function signUp(user: TestUser): Promise<void> {
  const steps: [string, Record<string, string>][] = [
    ['/api/signup/email/', { email: user.email }],
    ['/api/signup/password/', { email: user.email, password: user.password }],
    ['/api/signup/handle/', { email: user.email, handle: user.handle, first_name: user.firstName, last_name: user.lastName }],
    ['/api/signup/picture/', { email: user.email, handle: user.handle }],
  ];
  for (const [url, fields] of steps) {
    const res = await sys.request('POST', url, { form: fields, headers: withKey, from: '10.9.9.9' });
    expect(res.status, `${url}: ${res.text}`).toBe(200);
  }
}

const readiness = async () => {
  const res = await sys.request('GET', '/readyz');
  return { status: res.status, report: ReadinessSchema.parse(res.body) };
};
const runnerOf = (service: 'social') => {
  const readModels = sys.system.services.get(service)?.readModels;
  if (!readModels) throw new Error(`${service} has no read models`);
  return readModels;
};
const identityEnd = async () => (await sys.system.log.endOffsets(IDENTITY_TOPIC)).get(0) ?? 0;

describe('GET /healthz', () => {
  it('answers 200 {status: ok} without an Api-Key, and HEAD answers the same without a body', async () => {
    const res = await sys.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(HealthSchema.parse(res.body)).toEqual({ status: 'ok' });
    const head = await sys.request('HEAD', '/healthz');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('the /api/ routes still want their Api-Key (the probes are outside them, not the check switched off)', async () => {
    const res = await sys.request('GET', '/api/groups/');
    expect(res.body).toMatchObject({ error_type: 'authorization_failed', error_message: expect.stringContaining('Api-Key') });
  });
});

describe('GET /readyz', () => {
  it('answers 200 once every service read model is caught up, listing each projection of each service', async () => {
    const { status, report } = await eventually(async () => {
      const r = await readiness();
      expect(r.status).toBe(200);
      return r;
    });
    expect(status).toBe(200);
    expect(report).toMatchObject({ status: 'ready', maxLagEvents: 0, checks: [{ name: 'cache', ok: true }] });
    expect(new Set(report.readModels.map((l) => l.service))).toEqual(new Set(['groups', 'casties', 'social', 'notifications']));
    expect(report.readModels.find((l) => l.group === 'social-read' && l.projection === 'people')).toEqual({ service: 'social', group: 'social-read', projection: 'people', lagEvents: 0 });
    expect((await sys.request('HEAD', '/readyz')).status).toBe(200);
  });

  it('answers 503 with the lag in events while a projection is held behind the log, and 200 again once it caught up', async () => {
    await eventually(async () => expect((await readiness()).status).toBe(200));
    const social = runnerOf('social');
    await social.pause();
    let resumed = false;
    try {
      const before = await identityEnd();
      // A sign-up is written by identity; social's copy of people reads the identity topic.
      await signUp(newUser('lagging'));
      const written = (await identityEnd()) - before;
      expect(written).toBeGreaterThan(0);

      const { status, report } = await readiness();
      expect(status).toBe(503);
      expect(report.status).toBe('not_ready');
      const lagOf = (projection: string): ReadModelLag | undefined => report.readModels.find((l) => l.service === 'social' && l.projection === projection);
      // Exactly the records written since the pause; the friendships (social topic) are not behind.
      expect(lagOf('people')?.lagEvents).toBe(written);
      expect(lagOf('friendships')?.lagEvents).toBe(0);
      expect((await sys.request('HEAD', '/readyz')).status).toBe(503);

      // The same lag is what Prometheus scrapes.
      const metrics = await sys.request('GET', '/metrics');
      expect(sample(metrics.text, 'castie_projection_lag_events', { service: 'social', group: 'social-read', projection: 'people' })).toBe(written);

      // The service's own /readyz (what its pod probe asks in the cluster) says the same.
      const own = await sys.system.services.get('social')!.app.inject({ method: 'GET', url: '/readyz' });
      expect(own.statusCode).toBe(503);
      expect(ReadinessSchema.parse(own.json()).readModels.every((l) => l.service === 'social')).toBe(true);

      social.resume();
      resumed = true;
      await eventually(async () => expect((await readiness()).status).toBe(200));
      expect((await readiness()).report.readModels.every((l) => l.lagEvents === 0)).toBe(true);
    } finally {
      if (!resumed) social.resume();
    }
  });
});
