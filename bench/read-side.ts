// The read side on a realistic history, measured as a user and an operator meet it:
//   - first start on a data directory without read models (every read model built from the log):
//     time to first answer and events per second; then how long the policies' first pass over the
//     history keeps the server busy after that answer (it is let finish);
//   - restart on the same directory: time to first answer;
//   - server memory (RSS) after load (on the restarted server: a steady state), and the peak of
//     the first start (the rebuild and the policies' pass);
//   - GET /api/home/following/ for the user with the most frodads: in the casties service
//     (p50/p99 of inject, no gateway), and through the gateway over HTTP against a bare Fastify
//     process sending the same bytes (requests/s at 10 connections, ratio; p99 at 50).
// Every figure is measured for this checkout and, with --compare <dir>, for another checkout of
// the code (e.g. a worktree of an older commit) on the same seeded data, in the same run.
//
// npm run bench -- read-side [--compare <checkout>] [--data <seeded dir>] [--users 10000
//   --groups 200 --casties 20000 --forecasts 500000 --friends 30] [--seconds 5]
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { freshCopy, HUB, seededLog, sizesFrom } from './support/data-set.ts';
import { compiledScript, load, memoryOf, startBareFastify, startCastie, untilQuiet, type Load } from './support/processes.ts';
import { benchArgs, printTable } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const sizes = sizesFrom(flag);
const seconds = Number(flag('seconds', '5'));
const auth = { authorization: `Basic ${Buffer.from(`${HUB.email}:${HUB.password}`).toString('base64')}` };
const say = (line: string) => process.stderr.write(`read-side: ${line}\n`);

// 1. The history: seeded once per size, kept under .tmp/bench for the next runs.
const dataDir = has('data') ? resolve(flag('data', '')) : seededLog(here, sizes, say);
const log = await createFileEventLog({ dir: join(dataDir, 'log') });
let events = 0;
for (const topic of ['identity', 'identity-logins', 'groups', 'casties', 'social', 'notifications']) events += (await log.endOffsets(topic)).get(0) ?? 0;
await log.close();

interface Figures {
  label: string;
  firstStartMs: number;
  rebuildEventsPerSecond: number;
  /** From the first answer to a quiet server (the policies' first pass); null when it did not quiet down. */
  settledMs: number | null;
  perService: string[];
  restartMs: number;
  restartReportedMs: number | null;
  rssMb: number;
  peakMb: number;
  inService: { p50: number; p99: number; bytes: number };
  gateway10: Load;
  bare10: Load;
  gateway50: Load;
  bare50: Load;
}

async function measure(label: string, root: string): Promise<Figures> {
  const dir = freshCopy(dataDir);
  try {
    say(`${label}: first start on ${events.toLocaleString('en')} events (read models built from the log)`);
    const first = await startCastie(root, dir);
    const perService = first.lines.filter((l) => typeof l.msg === 'string' && / rebuilt | copied | built /.test(l.msg)).map((l) => String(l.msg));
    // After its first answer the server still works: the policies' first pass over the history.
    // It is let finish, as a first start would, so that the restart below is measured as any later
    // restart is (nothing left to catch up); its cost shows in the first start's peak.
    const settledMs = await untilQuiet(first.pid);
    const rebuildPeakMb = memoryOf(first.pid).peakMb;
    await first.stop();

    say(`${label}: restart on the same data directory`);
    const second = await startCastie(root, dir);
    const warm = await fetch(`http://127.0.0.1:${second.port}/api/home/following/`, { headers: auth });
    if (warm.status !== 200) throw new Error(`${label}: GET /api/home/following/ as ${HUB.handle} answered ${warm.status}: ${(await warm.text()).slice(0, 200)}`);
    const body = Buffer.from(await warm.arrayBuffer());
    const bare = await startBareFastify(root, body, warm.headers.get('content-type') ?? 'application/json');
    const url = (port: number) => `http://127.0.0.1:${port}/api/home/following/`;
    say(`${label}: load on the restarted server, ${seconds} s per row`);
    await load(url(second.port), { connections: 10, seconds: 2, headers: auth });
    const gateway10 = await load(url(second.port), { connections: 10, seconds, headers: auth });
    const bare10 = await load(url(bare.port), { connections: 10, seconds });
    const gateway50 = await load(url(second.port), { connections: 50, seconds, headers: auth });
    const bare50 = await load(url(bare.port), { connections: 50, seconds });
    const memory = memoryOf(second.pid);
    await bare.stop();
    await second.stop();

    say(`${label}: in the service`);
    const out = execFileSync(process.execPath, [...compiledScript('in-service.ts'), root, dir, HUB.handle, HUB.password, '500'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 });
    const inService = JSON.parse(out.trim().split('\n').at(-1)!) as Figures['inService'];
    return {
      label,
      firstStartMs: first.firstAnswerMs,
      rebuildEventsPerSecond: events / (first.firstAnswerMs / 1000),
      settledMs,
      perService,
      restartMs: second.firstAnswerMs,
      restartReportedMs: second.reportedStartMs,
      rssMb: memory.rssMb,
      peakMb: rebuildPeakMb,
      inService,
      gateway10,
      bare10,
      gateway50,
      bare50,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Figures[] = [];
if (compare) runs.push(await measure(`before (${compare})`, compare));
runs.push(await measure('this checkout', here));

const f0 = (n: number) => Math.round(n).toLocaleString('en');
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const rows: [string, (r: Figures) => string][] = [
  ['first start, no read models: to first answer (s)', (r) => f1(r.firstStartMs / 1000)],
  ['  = events applied per second (whole system)', (r) => f0(r.rebuildEventsPerSecond)],
  ['  then the policies\' first pass, till the server is quiet (s)', (r) => (r.settledMs === null ? 'not quiet in 180 s' : f1(r.settledMs / 1000))],
  ['restart, read models kept: to first answer (s)', (r) => f1(r.restartMs / 1000)],
  ['  of which the server itself (s)', (r) => (r.restartReportedMs === null ? '-' : f2(r.restartReportedMs / 1000))],
  ['server RSS after load, restarted (MB)', (r) => f0(r.rssMb)],
  ['peak RSS of the first start, its policies\' pass included (MB)', (r) => f0(r.peakMb)],
  [`home following in the service, p50 (ms)`, (r) => f2(r.inService.p50)],
  [`home following in the service, p99 (ms)`, (r) => f2(r.inService.p99)],
  ['response size (KB)', (r) => f1(r.inService.bytes / 1024)],
  ['through the gateway, 10 conn: req/s', (r) => f0(r.gateway10.requestsPerSecond)],
  ['bare Fastify, same bytes, 10 conn: req/s', (r) => f0(r.bare10.requestsPerSecond)],
  ['  ratio gateway / bare', (r) => f2(r.gateway10.requestsPerSecond / r.bare10.requestsPerSecond)],
  ['through the gateway, 50 conn: p50 / p99 (ms)', (r) => `${f0(r.gateway50.p50)} / ${f0(r.gateway50.p99)}`],
  ['  errors + timeouts, non-2xx', (r) => `${r.gateway50.errors + r.gateway10.errors}, ${r.gateway50.non2xx + r.gateway10.non2xx}`],
  ['bare Fastify, 50 conn: p50 / p99 (ms)', (r) => `${f0(r.bare50.p50)} / ${f0(r.bare50.p99)}`],
];
process.stdout.write(`\nread side on ${dataDir}: ${events.toLocaleString('en')} events (${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}); user ${HUB.handle}\n\n`);
printTable(runs, rows);
for (const r of runs) if (r.perService.length > 0) process.stdout.write(`\n${r.label}, rebuild per service:\n${r.perService.map((l) => `  ${l}`).join('\n')}\n`);
