import { ErrorBodySchema, HealthSchema, ReadinessSchema } from '@castie/contracts';
import type { Collection, Doc, DocumentStore } from '@castie/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, newUser, TestSystem, type TestUser } from '../../testing/harness.ts';

// In the cluster a service's pod is probed on the service's own port: /healthz (liveness: three
// failures and the pod is killed), /readyz, and Prometheus scrapes /metrics there. An operator's
// online rebuild makes the service's API answer 503; the probes must keep telling the truth.

/** While set, the rebuild stops where it records the projections' versions (its first write). */
let held: { entered: () => void; released: Promise<void> } | null = null;
function holdingRebuild(store: DocumentStore): DocumentStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown;
      return <T extends Doc>(spec: Parameters<DocumentStore['collection']>[0]) => {
        const collection = target.collection(spec) as unknown as Collection<T>;
        if (spec.name !== 'projection_versions') return collection;
        return new Proxy(collection, {
          get(c, name, r) {
            const value = Reflect.get(c, name, r) as unknown;
            if (name !== 'replaceOne' || typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              const hold = held;
              if (hold) {
                hold.entered();
                await hold.released;
              }
              return (value as (...a: unknown[]) => unknown).apply(c, args);
            };
          },
        });
      };
    },
  });
}

let sys: TestSystem;
let ada: TestUser;
beforeAll(async () => {
  sys = await TestSystem.start({ wrapDocuments: (service, store) => (service === 'social' ? holdingRebuild(store) : store) });
  ada = await sys.signUp(newUser('ada'));
}, 30_000);
afterAll(() => sys?.close(), 30_000);

describe('a service rebuilding its read models online', () => {
  it('stays alive and scrapeable, is not ready, and answers its API with 503 until the rebuild is done', async () => {
    const social = sys.system.services.get('social')!.app;
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    held = { entered, released: new Promise<void>((r) => (release = r)) };
    const rebuilding = sys.admin('POST', '/admin/read-models/social/rebuild/');
    try {
      await inside;

      const health = await social.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode, health.body).toBe(200);
      expect(HealthSchema.parse(health.json())).toEqual({ status: 'ok' });

      const ready = await social.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      const report = ReadinessSchema.parse(ready.json());
      expect(report.status).toBe('not_ready');
      expect(report.checks).toEqual([expect.objectContaining({ name: 'read-models', ok: false, error: expect.stringMatching(/rebuilding/) })]);

      const metrics = await social.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.statusCode, metrics.body.slice(0, 200)).toBe(200);
      expect(metrics.body).toContain('castie_http_request_duration_seconds');

      // The API itself still refuses to answer from half-built read models.
      const api = await sys.get('/api/frodad-requests/', ada);
      expect(api.status).toBe(503);
      expect(ErrorBodySchema.parse(api.body).error_type).toBe('service_unavailable');
    } finally {
      held = null;
      release();
    }
    expect((await rebuilding).status).toBe(200);
    await eventually(async () => expect((await sys.get('/api/frodad-requests/', ada)).status).toBe(200));
  });
});
