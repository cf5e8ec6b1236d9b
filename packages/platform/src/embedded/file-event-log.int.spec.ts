import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { describeEventLog } from '../testing/conformance/event-log.ts';
import type { EventLog, LogRecord, SubscribeOptions } from '../ports/event-log.ts';
import { createFileEventLog } from './file-event-log.ts';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'castie-log-'));

describeEventLog('file event log', async () => {
  const dir = await tempDir();
  const opened: EventLog[] = [];
  const open = async (): Promise<EventLog> => {
    const log = await createFileEventLog({ dir });
    opened.push(log);
    return log;
  };
  return {
    log: await open(),
    reopen: open,
    cleanup: async () => {
      for (const log of opened) await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

/** The position group `g` committed for topic `t`, as the positions file holds it. */
async function storedPosition(dir: string): Promise<number | undefined> {
  return (JSON.parse(await readFile(join(dir, 'consumer-offsets.json'), 'utf8')) as Record<string, Record<string, number>>).g?.['t:0'];
}

/** Every record of a topic, read through a throw-away consumer group. */
async function readAll(log: EventLog, topic: string): Promise<LogRecord[]> {
  const end = (await log.endOffsets(topic)).get(0) ?? 0;
  const records: LogRecord[] = [];
  const subscription = await log.subscribe({
    group: `read-${randomUUID()}`,
    topics: [topic],
    startAt: () => 'earliest',
    handle: async (batch) => void records.push(...batch),
  });
  expect(await subscription.waitFor([{ topic, partition: 0, offset: end - 1 }], 10_000)).toBe(true);
  await subscription.stop();
  return records;
}

describe('file event log on disk', () => {
  const dirs: string[] = [];
  const logs: EventLog[] = [];
  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  /** Opens a log in `dir`, collecting its warnings. */
  async function openLog(dir: string, options: { offsetsWriteIntervalMs?: number } = {}): Promise<{ log: EventLog; warnings: string[] }> {
    const warnings: string[] = [];
    const log = await createFileEventLog({ dir, ...options, onWarning: (message) => warnings.push(message) });
    logs.push(log);
    return { log, warnings };
  }

  /** A log in a fresh directory with three records in topic `t`, closed again. */
  async function threeRecords(): Promise<{ dir: string; file: string; size: number }> {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir);
    await log.append('t', [
      { key: 'a', value: '{"n":0}' },
      { key: 'b', value: '{"n":1}' },
      { key: 'a', value: '{"n":2}' },
    ]);
    await log.close();
    const file = join(dir, 't.log');
    return { dir, file, size: (await stat(file)).size };
  }

  const damages: [string, (file: string, size: number) => Promise<void>, number, RegExp][] = [
    ['half a record', (file) => appendFile(file, Buffer.from([100, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])), 3, /torn record/],
    ['a torn frame header', (file) => appendFile(file, Buffer.from([9, 0, 0])), 3, /torn frame header/],
    ['zeros (a crash after the size grew)', (file) => appendFile(file, Buffer.alloc(4096)), 3, /impossible record length 0/],
    [
      'a last record with a flipped byte',
      async (file, size) => {
        const bytes = await readFile(file);
        bytes.writeUInt8(bytes.readUInt8(size - 1) ^ 0xff, size - 1);
        await writeFile(file, bytes);
      },
      2,
      /bad checksum/,
    ],
  ];

  for (const [damage, inflict, kept, warning] of damages) {
    it(`cuts away ${damage} at open, keeps the records before it and appends after them`, async () => {
      const { dir, file, size } = await threeRecords();
      // As after a crash: the saved index of starts (written at a clean close) covers none of it.
      await rm(join(dir, 't.starts'), { force: true });
      await inflict(file, size);

      const { log, warnings } = await openLog(dir);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(warning);
      expect((await readAll(log, 't')).map((r) => r.value)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}'].slice(0, kept));
      expect(await log.append('t', [{ key: 'c', value: '{"n":"after"}' }])).toEqual([{ topic: 't', partition: 0, offset: kept }]);
      await log.close();

      const again = await openLog(dir);
      expect(again.warnings).toEqual([]);
      expect((await readAll(again.log, 't')).map((r) => r.value).at(-1)).toBe('{"n":"after"}');
    });
  }

  it('opens a closed log from its saved index without reading it all, and refuses a damaged record when read', async () => {
    const { dir, file, size } = await threeRecords();
    const bytes = await readFile(file);
    bytes.writeUInt8(bytes.readUInt8(size - 1) ^ 0xff, size - 1);
    await writeFile(file, bytes);
    const { log, warnings } = await openLog(dir);
    // The index covers every byte: nothing was scanned, so the damage is found when read.
    expect(warnings).toEqual([]);
    expect((await log.endOffsets('t')).get(0)).toBe(3);
    expect((await (log as Awaited<ReturnType<typeof createFileEventLog>>).read('t', 0, 2)).map((r) => r.value)).toEqual(['{"n":0}', '{"n":1}']);
    await expect((log as Awaited<ReturnType<typeof createFileEventLog>>).read('t', 2, 1)).rejects.toThrow(/t@2: the record is damaged/);
  });

  it('opens a log of 300,000 records from its saved index, and reads the first and the last', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir);
    for (let batch = 0; batch < 30; batch++) await log.append('big', Array.from({ length: 10_000 }, (_, i) => ({ key: 'k', value: `{"n":${batch * 10_000 + i}}` })));
    await log.close();
    const again = await openLog(dir);
    const big = again.log as Awaited<ReturnType<typeof createFileEventLog>>;
    expect((await big.endOffsets('big')).get(0)).toBe(300_000);
    expect((await big.read('big', 0, 1))[0]!.value).toBe('{"n":0}');
    expect((await big.read('big', 299_999, 1))[0]!.value).toBe('{"n":299999}');
  });

  it('reads back every record as written, old ones and the newest alike, while the log is open and after it reopened', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const log = (await openLog(dir)).log as Awaited<ReturnType<typeof createFileEventLog>>;
    // 12 MB: more than the newest records kept in memory, so reads come from memory and from the file.
    const value = (n: number) => JSON.stringify({ n, pad: 'x'.repeat(4000) });
    for (let batch = 0; batch < 30; batch++) await log.append('t', Array.from({ length: 100 }, (_, i) => ({ key: `k${i % 7}`, value: value(batch * 100 + i) })));
    const check = async (l: typeof log) => {
      for (const [from, max] of [[0, 10], [1000, 500], [2990, 50], [2999, 1]] as const) {
        const read = await l.read('t', from, max);
        expect(read.map((r) => [r.offset, r.key, r.value])).toEqual(Array.from({ length: Math.min(max, 3000 - from) }, (_, i) => [from + i, `k${(from + i) % 100 % 7}`, value(from + i)]));
      }
    };
    await check(log);
    await log.close();
    await check((await openLog(dir)).log as typeof log);
  });

  it('ignores a saved index that does not fit the log, and scans it', async () => {
    const { dir } = await threeRecords();
    await writeFile(join(dir, 't.starts'), Buffer.from('CSTART01garbage!'));
    const { log, warnings } = await openLog(dir);
    expect(warnings).toEqual([]);
    expect((await readAll(log, 't')).map((r) => r.value)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
  });

  it('keeps every acknowledged record when the writing process is killed with SIGKILL', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const root = fileURLToPath(new URL('../../../../', import.meta.url));
    const script = fileURLToPath(new URL('./test-fixtures/append-until-killed.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, 'crash'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<string | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));

    const started = Date.now();
    while (stdout === '' && child.exitCode === null && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 10));
    expect(stdout, stderr).not.toBe('');
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    expect(await closed).toBe('SIGKILL');

    const acknowledged = stdout.trim().split('\n').map((line) => line.split(' ').map(Number) as [number, number, number]);
    expect(acknowledged.length).toBeGreaterThan(0);
    const { log } = await openLog(dir);
    const records = await readAll(log, 'crash');
    expect(records.length).toBeGreaterThanOrEqual(acknowledged.length);
    for (const [offset, writer, seq] of acknowledged) {
      expect(records[offset]).toMatchObject({ offset, key: `w${writer}` });
      expect(JSON.parse(records[offset]!.value)).toEqual({ writer, seq, pad: 'x'.repeat((seq * 37) % 300) });
    }
    // Unacknowledged records that made it to disk must be whole too.
    for (const record of records) expect(JSON.parse(record.value)).toMatchObject({ writer: Number(record.key.slice(1)) });
    expect(await log.append('crash', [{ key: 'after', value: '{}' }])).toEqual([{ topic: 'crash', partition: 0, offset: records.length }]);
    await log.close();

    const again = await openLog(dir);
    expect(again.warnings).toEqual([]);
    expect((await again.log.endOffsets('crash')).get(0)).toBe(records.length + 1);
  });

  it('refuses a second subscription of one group to a topic, and allows it once the first stopped', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir);
    const options = { group: 'g', topics: ['t'], handle: async () => {} };
    const first = await log.subscribe(options);
    await expect(log.subscribe(options)).rejects.toThrow(/already has a subscription/);
    await first.stop();
    await (await log.subscribe(options)).stop();
  });

  it('writes consumer positions at once after a quiet moment, then at most once per interval, and at once when the subscription stops', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir, { offsetsWriteIntervalMs: 60_000 });
    const stored = () => storedPosition(dir);
    const subscription = await log.subscribe({ group: 'g', topics: ['t'], startAt: () => 'earliest', handle: async () => {} });
    const append = async (n: number) => (await log.append('t', [{ key: `k${n}`, value: `v${n}` }]))[0]!;
    expect(await subscription.waitFor([await append(0)], 10_000)).toBe(true);
    await expect.poll(stored).toBe(1);
    for (let n = 1; n < 5; n++) expect(await subscription.waitFor([await append(n)], 10_000)).toBe(true);
    // Within the interval the file keeps the first position; the handled ones are known all the same.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await stored()).toBe(1);
    await subscription.stop();
    expect(await stored()).toBe(5);
    // A new subscription of the group resumes where the stopped one committed.
    const resumed: string[] = [];
    const again = await log.subscribe({ group: 'g', topics: ['t'], handle: async (records) => void resumed.push(...records.map((r) => r.value)) });
    expect(await again.waitFor([await append(5)], 10_000)).toBe(true);
    expect(resumed).toEqual(['v5']);
    await again.stop();
  });

  /** A log in a new directory and a subscription of topic `t` from its start, with the values of each batch it was handed. */
  async function batchesOf(timing: Pick<SubscribeOptions, 'batchIntervalMs' | 'waitedBatchIntervalMs'>) {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir);
    const batches: string[][] = [];
    const subscription = await log.subscribe({ group: 'g', topics: ['t'], startAt: () => 'earliest', ...timing, handle: async (records) => void batches.push(records.map((r) => r.value)) });
    return { log, batches, subscription };
  }

  it('holds the records that come within the batch interval for one batch, which a waiter for one of them brings forward', async () => {
    const { log, batches, subscription } = await batchesOf({ batchIntervalMs: 60_000, waitedBatchIntervalMs: 0 });
    const append = async (n: number) => (await log.append('t', [{ key: `k${n}`, value: `v${n}` }]))[0]!;
    // An idle consumer hands a record over at once.
    expect(await subscription.waitFor([await append(0)], 10_000)).toBe(true);
    // The next ones come within the interval: nobody waits for them, so they wait for the next batch.
    await append(1);
    const last = await append(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches).toEqual([['v0']]);
    // Their writer reads back the last one: the batch starts now, not a minute later, with both.
    expect(await subscription.waitFor([last], 10_000)).toBe(true);
    expect(batches).toEqual([['v0'], ['v1', 'v2']]);
    // Waiting for what was handled already changes nothing: the next record waits for the interval again.
    expect(await subscription.waitFor([last], 10_000)).toBe(true);
    await append(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches).toHaveLength(2);
    await subscription.stop();
  });

  it('waits after a batch as long as its size says: at once after a small one, the interval after a busy one', async () => {
    const { log, batches, subscription } = await batchesOf({ batchIntervalMs: (records) => (records >= 2 ? 60_000 : 0) });
    const append = (...values: string[]) => log.append('t', values.map((value) => ({ key: 'k', value })));
    await append('a');
    await expect.poll(() => batches).toEqual([['a']]);
    // After a batch of one, the next record is handed over at once (nobody waits for it here).
    await append('b', 'c');
    await expect.poll(() => batches).toEqual([['a'], ['b', 'c']]);
    // After a batch of two, the next one waits for the interval.
    await append('d');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches).toHaveLength(2);
    await subscription.stop();
  });

  it('reports a failing rewrite of the positions once per interval, not at every commit, and writes them on stop', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    // The temporary file cannot be opened for writing: every rewrite fails until it is removed.
    await mkdir(join(dir, 'consumer-offsets.json.tmp'), { recursive: true });
    const { log, warnings } = await openLog(dir, { offsetsWriteIntervalMs: 60_000 });
    const subscription = await log.subscribe({ group: 'g', topics: ['t'], startAt: () => 'earliest', handle: async () => {} });
    for (let n = 0; n < 20; n++) expect(await subscription.waitFor(await log.append('t', [{ key: 'k', value: `v${n}` }]), 10_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings.filter((w) => w.includes('committing consumer positions failed'))).toHaveLength(1);
    await rm(join(dir, 'consumer-offsets.json.tmp'), { recursive: true });
    await subscription.stop();
    expect(await storedPosition(dir)).toBe(20);
  });

  it('stops a subscription without waiting for the interval while other groups keep committing', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir, { offsetsWriteIntervalMs: 60_000 });
    const stored = () => storedPosition(dir);
    const [g, h] = await Promise.all(['g', 'h'].map((group) => log.subscribe({ group, topics: ['t'], startAt: () => 'earliest', handle: async () => {} })));
    let appended = 0;
    let busy = true;
    const load = (async () => {
      while (busy) {
        const [at] = await log.append('t', [{ key: 'k', value: `v${appended++}` }]);
        await h!.waitFor([at!], 10_000);
      }
    })();
    expect(await g!.waitFor([{ topic: 't', partition: 0, offset: 20 }], 10_000)).toBe(true);
    const handled = g!.handled().get('t:0')! + 1;
    // Group h commits after every record meanwhile; g's stop writes its position all the same.
    await g!.stop();
    expect(await stored()).toBeGreaterThanOrEqual(handled);
    busy = false;
    await load;
    await h!.stop();
  });

  it('opened read-only beside its owner, reads every record and writes nothing: no appends, consumer positions or index', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log: owner } = await openLog(dir);
    const values = Array.from({ length: 20_000 }, (_, i) => ({ key: `k${i % 7}`, value: JSON.stringify({ i }) }));
    await owner.append('t', values);
    const files = async () => Object.fromEntries(await Promise.all(['t.log', 'consumer-offsets.json', 't.starts'].map(async (f) => [f, await stat(join(dir, f)).then((s) => `${s.size} ${s.mtimeMs}`, () => 'absent')])));
    const before = await files();
    // Fewer records than the owner saves its index after: a .starts file here would be the reader's.
    const reader = await createFileEventLog({ dir, readOnly: true });
    logs.push(reader);
    expect((await reader.endOffsets('t')).get(0)).toBe(20_000);
    expect((await reader.endOffsets('never-written')).get(0)).toBe(0);
    const seen: LogRecord[] = [];
    const subscription = await reader.subscribe({ group: 'g', topics: ['t', 'never-written'], startAt: () => 'earliest', handle: async (records) => void seen.push(...records) });
    expect(await subscription.waitFor([{ topic: 't', partition: 0, offset: 19_999 }], 10_000)).toBe(true);
    await subscription.stop();
    expect(seen.map((r) => r.value)).toEqual(values.map((v) => v.value));
    await expect(reader.append('t', [{ key: 'k', value: '{}' }])).rejects.toThrow(/read-only/);
    await reader.close();
    expect(await files()).toEqual(before);
    expect((await owner.endOffsets('t')).get(0)).toBe(20_000);
  });

  it('rejects topic names that are not safe file names, and appends after close', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { log } = await openLog(dir);
    await expect(log.append('../escape', [{ key: 'k', value: '{}' }])).rejects.toThrow(/invalid topic name/);
    await log.close();
    await expect(log.append('t', [{ key: 'k', value: '{}' }])).rejects.toThrow(/closed/);
  });
});
