import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileEventLog, type FileEventLog } from '../embedded/file-event-log.ts';
import { measuredEventLog } from './measured-event-log.ts';
import { Metrics } from './metrics.ts';

let dir: string;
let fileLog: FileEventLog;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-measured-log-'));
  fileLog = await createFileEventLog({ dir });
});
afterEach(async () => {
  await fileLog.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

/** The value of one sample of the exposition, e.g. `castie_event_log_append_duration_seconds_count{topic="t",outcome="ok"}`. */
async function value(metrics: Metrics, series: string): Promise<number | undefined> {
  const line = (await metrics.text()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('measuredEventLog', () => {
  it('given a file log, when records are appended through it, then they are in the log and each append is counted under its topic', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const log = measuredEventLog(fileLog, metrics);
    const positions = await log.append('orders', [{ key: 'a', value: '{"n":1}' }, { key: 'b', value: '{"n":2}' }]);
    await log.append('orders', [{ key: 'a', value: '{"n":3}' }]);

    expect(positions.map((p) => p.offset)).toEqual([0, 1]);
    // The adapter's own members still work through the decorator (the embedded event store reads with them).
    expect(log.dir).toBe(dir);
    expect((await log.read('orders', 0, 10)).map((r) => r.value)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(await log.endOffsets('orders')).toEqual(new Map([[0, 3]]));
    expect(await value(metrics, 'castie_event_log_append_duration_seconds_count{topic="orders",outcome="ok"}')).toBe(2);
    expect(await value(metrics, 'castie_event_log_append_duration_seconds_bucket{le="+Inf",topic="orders",outcome="ok"}')).toBe(2);
  });

  it('given a closed log, when an append fails, then the error reaches the caller and the append counts as an error', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const log = measuredEventLog(fileLog, metrics);
    await log.close();
    await expect(log.append('orders', [{ key: 'a', value: '{}' }])).rejects.toThrow();
    expect(await value(metrics, 'castie_event_log_append_duration_seconds_count{topic="orders",outcome="error"}')).toBe(1);
    expect(await value(metrics, 'castie_event_log_append_duration_seconds_count{topic="orders",outcome="ok"}')).toBeUndefined();
  });

  it('given two systems in one process, each with its metrics, then neither sees the other\'s appends', async () => {
    const first = new Metrics();
    const second = new Metrics();
    await measuredEventLog(fileLog, first).append('orders', [{ key: 'a', value: '{}' }]);
    expect(await value(first, 'castie_event_log_append_duration_seconds_count{topic="orders",outcome="ok"}')).toBe(1);
    expect(await value(second, 'castie_event_log_append_duration_seconds_count{topic="orders",outcome="ok"}')).toBeUndefined();
  });
});
