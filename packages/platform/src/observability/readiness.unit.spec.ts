import type { ReadModelLag } from '@castie/contracts';
import { describe, expect, it } from 'vitest';
import { ReadinessProbe } from './readiness.ts';

const lagOf = (lagEvents: number): ReadModelLag => ({ service: 'groups', group: 'groups-read', projection: 'people', lagEvents });
const readModels = (...lags: ReadModelLag[]) => ({ lag: async () => lags });

describe('ReadinessProbe', () => {
  it('given read models within the bound, then ready', async () => {
    const report = await new ReadinessProbe({ readModels: readModels(lagOf(0), lagOf(10)), maxLagEvents: 10 }).report();
    expect(report).toEqual({ status: 'ready', maxLagEvents: 10, readModels: [lagOf(0), lagOf(10)], checks: [] });
  });

  it('given one projection past the bound, then not ready, with every lag listed', async () => {
    const report = await new ReadinessProbe({ readModels: readModels(lagOf(0), lagOf(11)), maxLagEvents: 10 }).report();
    expect(report.status).toBe('not_ready');
    expect(report.readModels.map((l) => l.lagEvents)).toEqual([0, 11]);
  });

  it('given no bound, then 1000 records', async () => {
    expect((await new ReadinessProbe({ readModels: readModels(lagOf(1000)) }).report()).status).toBe('ready');
    expect((await new ReadinessProbe({ readModels: readModels(lagOf(1001)) }).report()).status).toBe('not_ready');
  });

  it('given a dependency that never answers, then not ready, saying which and why', async () => {
    const report = await new ReadinessProbe({ checks: [{ name: 'cache', probe: () => new Promise<void>(() => undefined) }], timeoutMs: 20 }).report();
    expect(report).toMatchObject({ status: 'not_ready', checks: [{ name: 'cache', ok: false, error: 'no answer within 20 ms' }] });
  });

  it('given a lag that cannot be read (the log unreachable), then not ready', async () => {
    const report = await new ReadinessProbe({ readModels: { lag: () => Promise.reject(new Error('broker down')) } }).report();
    expect(report).toMatchObject({ status: 'not_ready', readModels: [], checks: [{ name: 'read-models', ok: false, error: 'broker down' }] });
  });
});
