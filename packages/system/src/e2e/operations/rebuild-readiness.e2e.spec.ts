import { ErrorBodySchema, ReadinessSchema } from '@castie/contracts';
import type { Collection, Doc, DocumentStore } from '@castie/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, newUser, TestSystem } from '../../testing/harness.ts';

// While an operator rebuilds a service's read models (POST /admin/read-models/<service>/rebuild/),
// what probes and clients see: the service and the embedded gateway are alive but not ready,
// naming the rebuild; the service's /api/ answers are 503 with Retry-After, through the gateway.

/** While set, writes to the social service's read models wait for it: the rebuild is held mid-way. */
let hold: { entered: () => void; released: Promise<void> } | null = null;
const WRITES = new Set(['insertOne', 'insertMany', 'replaceOne', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany']);
function holdableStore(store: DocumentStore): DocumentStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown;
      return <T extends Doc>(spec: Parameters<DocumentStore['collection']>[0]) => {
        const collection = target.collection(spec) as unknown as Collection<T>;
        return new Proxy(collection, {
          get(c, name, r) {
            const value = Reflect.get(c, name, r) as unknown;
            if (typeof value !== 'function' || !WRITES.has(String(name))) return value;
            return async (...args: unknown[]) => {
              const held = hold;
              if (held) {
                held.entered();
                await held.released;
              }
              return (value as (...a: unknown[]) => unknown).apply(c, args);
            };
          },
        });
      };
    },
  });
}
const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start({ wrapDocuments: (service, store) => (service === 'social' ? holdableStore(store) : store) });
}, 30_000);
afterAll(() => sys?.close(), 30_000);

const socialApp = () => sys.system.services.get('social')!.app;
const readiness = async (ask: () => Promise<{ statusCode: number; body: string }>) => {
  const res = await ask();
  return { status: res.statusCode, report: ReadinessSchema.parse(JSON.parse(res.body)) };
};
const gatewayReadyz = () => readiness(() => sys.system.gateway.inject({ method: 'GET', url: '/readyz' }));
const socialReadyz = () => readiness(() => socialApp().inject({ method: 'GET', url: '/readyz' }));

describe('readiness and answers while an operator rebuilds a service', () => {
  it('is not ready (503 naming the rebuild) and answers /api/ with 503 and Retry-After until the rebuild ends', async () => {
    const ann = await sys.signUp(newUser('ann'));
    expect((await sys.get('/api/frodad-requests/', ann)).status).toBe(200);
    expect((await gatewayReadyz()).status).toBe(200);
    expect((await socialReadyz()).status).toBe(200);
    // The hold below must catch the rebuild's writes, not a live batch still applying ann's
    // sign-up (batches under load wait up to 20 ms): let social apply everything first.
    await eventually(async () => expect((await sys.system.services.get('social')!.readModels!.lag()).every((l) => l.lagEvents === 0)).toBe(true));

    const entered = deferred();
    const release = deferred();
    hold = { entered: entered.resolve, released: release.promise };
    const rebuilding = sys.admin('POST', '/admin/read-models/social/rebuild/');
    await entered.promise;
    try {
      const service = await socialReadyz();
      expect(service.status).toBe(503);
      expect(service.report).toMatchObject({ status: 'not_ready', checks: [{ name: 'read-models', ok: false, error: 'social-read: rebuilding its read models' }] });
      const gateway = await gatewayReadyz();
      expect(gateway.status).toBe(503);
      expect(gateway.report.status).toBe('not_ready');
      expect(gateway.report.checks).toContainEqual({ name: 'read-models', ok: false, error: 'social-read: rebuilding its read models' });
      // Alive all the same: nothing should restart a process that is rebuilding.
      expect((await sys.request('GET', '/healthz')).status).toBe(200);
      expect((await socialApp().inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      // A client of the rebuilding service is told to come back, through the gateway.
      const answer = await sys.get('/api/frodad-requests/', ann);
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(ErrorBodySchema.parse(answer.body)).toMatchObject({ status: 503, error_type: 'service_unavailable', error_message: 'the social service is rebuilding its read models; try again in a moment' });
      // The other services go on.
      expect((await sys.get('/api/groups/', ann)).status).toBe(200);
    } finally {
      hold = null;
      release.resolve();
    }

    expect((await rebuilding).status).toBe(200);
    expect(await gatewayReadyz()).toMatchObject({ status: 200, report: { status: 'ready' } });
    expect(await socialReadyz()).toMatchObject({ status: 200, report: { status: 'ready' } });
    const after = await sys.get('/api/frodad-requests/', ann);
    expect(after.status).toBe(200);
    expect(after.headers['retry-after']).toBeUndefined();
  });
});
