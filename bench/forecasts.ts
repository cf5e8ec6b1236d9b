// The write path under load: 32 clients, each a distinct seeded user, POST forecasts through the
// gateway (HTTP, keep-alive, one connection each) on open Casties of groups they follow that they
// have not forecast yet, for a fixed time. Printed: accepted forecasts/s, refusals by status and
// error_type, p50/p99 latency, and how long a user waits to read their own write (session
// consistency: the read models must have applied it): the first client reads each Castie back
// right after its forecast, while the others write; and the last author's read once all stopped.
//
// Meanwhile one more client, the seeded user with 300 frodads who does not forecast, reads its home
// feed (100 Casties) one request at a time: what a reader meets while the server writes (its
// projections commit many times a second). It takes about a tenth of the server's main thread;
// --readers 0 leaves it out, to measure the writers alone, as the fast-paths issue states its
// goal (32 clients posting forecasts). With --phones N, N more connections read it as phones
// do, compressed (Accept-Encoding: gzip, deflate, br), without pause: compression runs on libuv's
// thread pool, where the log's durable appends also wait.
//
// Each checkout runs on its own copy of a seeded data directory with built read models (no
// rebuild at start), so both runs start from the same history; with --compare <checkout> the other
// checkout (e.g. a worktree of the previous main) is measured in the same run.
//
// The per-user request budget (an abuse limit, USER_REQUESTS_PER_MINUTE) is set very high: it
// would otherwise turn the load into 429s, and it is not what is measured.
//
// npm run bench -- forecasts [--compare <checkout>] [--data <seeded dir with log/ and read-models/>]
//   [--clients 32] [--seconds 10] [--warmup 3] [--rounds 1] [--readers 1] [--phones 0] [--cpu-prof <dir>]
//
// With --rounds N the checkouts are measured N times each, alternating which goes first (A B,
// B A, ...), each time on a fresh copy: this machine's load drifts by tens of percent within
// minutes, so one run of each is not enough to tell a change from the drift. Each round's ratio
// and their median are printed.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB, readyCopy, sizesFrom } from './support/data-set.ts';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { cpuMsOf, startCastie } from './support/processes.ts';
import { benchArgs } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const clients = Number(flag('clients', '32'));
const seconds = Number(flag('seconds', '10'));
const warmupSeconds = Number(flag('warmup', '3'));
const rounds = Math.max(1, Number(flag('rounds', '1')));
const phones = Math.max(0, Number(flag('phones', '0')));
const readers = Math.max(0, Number(flag('readers', '1')));
const cpuProfDir = has('cpu-prof') ? resolve(flag('cpu-prof', '')) : null;
const say = (line: string) => process.stderr.write(`forecasts: ${line}\n`);
// The seeded history of the read-side issue with its read models (bench/support/data-set.ts), or --data <dir>.
const readyDir = has('data') ? null : await readyCopy(here, sizesFrom(flag), say);
const dataDir = readyDir ?? resolve(flag('data', ''));
const PASSWORD = 'seed-password';
const REQUESTS_PER_MINUTE = '1000000000';

if (!existsSync(join(dataDir, 'log')) || !existsSync(join(dataDir, 'read-models'))) {
  throw new Error(`${dataDir} holds no seeded log with built read models: pass --data <dir> (e.g. a data directory the read-side bench seeded, after one start built its read-models/)`);
}

/** One seeded user and the forecasts it may still place: open Casties of groups it sees, not forecast yet. */
interface Forecaster {
  handle: string;
  authorization: string;
  bodies: { uuid: string; body: string }[];
}

/**
 * Reads the history (identity logins, group follows, Casties, forecasts) from the copy's log and
 * lists, for seeded users in handle order, what each may forecast now. Casties closing within the
 * next hour are left out, so none closes during the run.
 */
async function forecasters(logDir: string): Promise<Forecaster[]> {
  const log = await createFileEventLog({ dir: logDir });
  const each = async (topic: string, visit: (type: string, data: Record<string, unknown>) => void) => {
    const end = (await log.endOffsets(topic)).get(0) ?? 0;
    for (let at = 0; at < end; ) {
      const records = await log.read(topic, at, 5000);
      if (records.length === 0) break;
      for (const r of records) {
        const e = JSON.parse(r.value) as { type: string; data: Record<string, unknown> };
        visit(e.type, e.data);
      }
      at += records.length;
    }
  };
  const emailOf = new Map<string, string>();
  const closed = new Set<string>();
  await each('identity-logins', (type, d) => {
    if (type === 'LoginCreated') emailOf.set(d.userId as string, d.email as string);
    if (type === 'LoginClosed') closed.add(d.userId as string);
  });
  const sees = new Map<string, Set<string>>();
  await each('groups', (type, d) => {
    const userId = d.userId as string;
    if (type === 'GroupFollowed' || type === 'GroupAccessGranted') (sees.get(userId) ?? sees.set(userId, new Set()).get(userId)!).add(d.slug as string);
    if (type === 'GroupUnfollowed' || type === 'GroupAccessDenied') sees.get(userId)?.delete(d.slug as string);
  });
  const openBy = new Map<string, Map<string, string>>(); // group -> castie -> request body
  const groupOf = new Map<string, string>();
  const forecast = new Map<string, Set<string>>();
  const horizon = Date.now() + 3600_000;
  await each('casties', (type, d) => {
    if (type === 'CastieCreated') {
      const endsAt = d.endsAt as string | null;
      if (endsAt !== null && Date.parse(endsAt) < horizon) return;
      const options = d.options as { answerId: number }[];
      const body = d.allowWriteIn ? JSON.stringify({ forecast_text: 'Somebody nobody expects' }) : JSON.stringify({ answer_id: options[0]!.answerId });
      const slug = d.groupSlug as string;
      (openBy.get(slug) ?? openBy.set(slug, new Map()).get(slug)!).set(d.castieId as string, body);
      groupOf.set(d.castieId as string, slug);
    } else if (type === 'CastieAnswered') {
      openBy.get(groupOf.get(d.castieId as string) ?? '')?.delete(d.castieId as string);
    } else if (type === 'ForecastPlaced') {
      const userId = d.userId as string;
      (forecast.get(userId) ?? forecast.set(userId, new Set()).get(userId)!).add(d.castieId as string);
    }
  });
  await log.close();
  const out: Forecaster[] = [];
  for (const [userId, email] of emailOf) {
    const handle = /^(seed\d+)@example\.com$/.exec(email)?.[1];
    if (!handle || closed.has(userId)) continue;
    const done = forecast.get(userId) ?? new Set<string>();
    const bodies: Forecaster['bodies'] = [];
    for (const slug of sees.get(userId) ?? []) for (const [uuid, body] of openBy.get(slug) ?? []) if (!done.has(uuid)) bodies.push({ uuid, body });
    out.push({ handle, authorization: `Basic ${Buffer.from(`${email}:${PASSWORD}`).toString('base64')}`, bodies });
  }
  return out.sort((a, b) => Number(a.handle.slice(4)) - Number(b.handle.slice(4)));
}

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function send(agent: Agent, port: number, method: 'GET' | 'POST', path: string, authorization: string, body?: string, acceptEncoding?: string): Promise<Answer & { encoding: string | undefined }> {
  const started = performance.now();
  return new Promise((resolveAnswer, reject) => {
    const headers: Record<string, string | number> = { authorization, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started, encoding: res.headers['content-encoding'] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Figures {
  label: string;
  users: number;
  accepted: number;
  perSecond: number;
  refusals: Map<string, number>;
  p50: number;
  p99: number;
  max: number;
  /** Server CPU per accepted forecast: steadier than forecasts/s on a machine others share. */
  cpuMsPerForecast: number;
  readAfterMs: number;
  readSeesWrite: boolean;
  /** The first client's reads of each Castie it just forecast, while the others write: p50, p99, max (ms), how many, and how many missed the forecast. */
  ownReads: { p50: number; p99: number; max: number; count: number; missed: number };
  errors: number;
  /** The reader's home feed while the writers write: p50, p99, max (ms), and how many. */
  reads: { p50: number; p99: number; max: number; count: number };
  /** The phones' compressed home feeds meanwhile (--phones). */
  phoneReads: { p50: number; p99: number; max: number; count: number };
  /** The phones' connection errors and answers other than a compressed 200. */
  phoneFailures: number;
}

const percentile = (sorted: number[], p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!);

async function measure(label: string, root: string, copy: string, pool: Forecaster[]): Promise<Figures> {
  say(`${label}: starting the server on a copy of the seeded data`);
  const nodeArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(cpuProfDir, label.replace(/[^a-z0-9]+/gi, '-'))}`] : [];
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const server = await startCastie(root, copy, { USER_REQUESTS_PER_MINUTE: REQUESTS_PER_MINUTE }, nodeArgs);
  say(`${label}: answering after ${(server.firstAnswerMs / 1000).toFixed(1)} s; ${clients} clients, ${warmupSeconds} s warm-up, ${seconds} s measured`);
  const queue = [...pool];
  const latencies: number[] = [];
  const refusals = new Map<string, number>();
  let accepted = 0;
  let errors = 0;
  let users = 0;
  let measuring = false;
  let stop = false;
  let last: { user: Forecaster; uuid: string; agent: Agent } | null = null;
  const agents: Agent[] = [];
  const ownReadTimes: number[] = [];
  let ownReadsMissed = 0;
  let clientsStarted = 0;
  const client = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    // The first client reads each Castie back right after its forecast, as an app shows it:
    // how long a user waits for their own write while everyone else writes (session consistency).
    const readsBack = clientsStarted++ === 0;
    for (let user = queue.shift(); user && !stop; user = queue.shift()) {
      users++;
      for (const { uuid, body } of user.bodies) {
        if (stop) break;
        let answer: Answer;
        try {
          answer = await send(agent, server.port, 'POST', `/api/casties/${uuid}/forecast/`, user.authorization, body);
        } catch {
          if (measuring) errors++;
          continue;
        }
        if (!measuring || stop) continue;
        latencies.push(answer.ms);
        if (answer.status === 200) {
          accepted++;
          last = { user, uuid, agent };
          if (readsBack) {
            const read = await send(agent, server.port, 'GET', `/api/casties/${uuid}/`, user.authorization).catch(() => null);
            if (read && !stop) {
              ownReadTimes.push(read.ms);
              if (!(read.status === 200 && /"userForecast":\s*("|\{)/.test(read.body))) ownReadsMissed++;
            }
          }
        } else {
          let type = '';
          try {
            type = (JSON.parse(answer.body) as { error_type?: string }).error_type ?? '';
          } catch {
            // not the envelope
          }
          const key = `${answer.status} ${type}`.trim();
          refusals.set(key, (refusals.get(key) ?? 0) + 1);
        }
      }
    }
  };
  const readTimes: number[] = [];
  const phoneTimes: number[] = [];
  let phoneFailures = 0;
  const reader = async (times: number[], acceptEncoding?: string) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const authorization = `Basic ${Buffer.from(`${HUB.email}:${HUB.password}`).toString('base64')}`;
    while (!stop) {
      const answer = await send(agent, server.port, 'GET', '/api/home/following/', authorization, undefined, acceptEncoding).catch(() => null);
      if (!measuring || stop) continue;
      if (answer?.status === 200 && (!acceptEncoding || answer.encoding !== undefined)) times.push(answer.ms);
      else if (acceptEncoding) phoneFailures++;
    }
  };
  const running = [...Array.from({ length: clients }, client), ...Array.from({ length: readers }, () => reader(readTimes)), ...Array.from({ length: phones }, () => reader(phoneTimes, 'gzip, deflate, br'))];
  await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
  measuring = true;
  const started = performance.now();
  const cpuBefore = cpuMsOf(server.pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  stop = true;
  const cpuMs = cpuMsOf(server.pid) - cpuBefore;
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(running);
  if (queue.length === 0) say(`${label}: WARNING: the seeded users ran out of open Casties; the figures undercount`);

  // The author's next read must see the forecast (the gateway makes it wait for the read models).
  let readAfterMs = NaN;
  let readSeesWrite = false;
  const lastWrite = last as { user: Forecaster; uuid: string; agent: Agent } | null;
  if (lastWrite) {
    const read = await send(lastWrite.agent, server.port, 'GET', `/api/casties/${lastWrite.uuid}/`, lastWrite.user.authorization);
    readAfterMs = read.ms;
    readSeesWrite = read.status === 200 && /"userForecast":\s*("|\{)/.test(read.body);
  }
  for (const agent of agents) agent.destroy();
  await server.stop();
  latencies.sort((a, b) => a - b);
  const summary = (times: number[]) => {
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1) ?? NaN, count: times.length };
  };
  const reads = summary(readTimes);
  const phoneReads = summary(phoneTimes);
  const ownReads = { ...summary(ownReadTimes), missed: ownReadsMissed };
  return { label, users, accepted, perSecond: accepted / elapsed, refusals, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN, cpuMsPerForecast: cpuMs / accepted, readAfterMs, readSeesWrite, ownReads, errors, reads, phoneReads, phoneFailures };
}

const checkouts: [string, string][] = [];
if (compare) checkouts.push([`before (${compare})`, compare]);
checkouts.push(['this checkout', here]);
const runs: Figures[] = [];
/** Per round, each checkout's figures (in `checkouts` order). */
const byRound: Figures[][] = [];
let pool: Forecaster[] | null = null;
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? checkouts : [...checkouts].reverse();
  const measured = new Map<string, Figures>();
  for (const [name, root] of order) {
    const label = rounds > 1 ? `${name} #${round}` : name;
    const copy = mkdtempSync(join(tmpdir(), 'castie-forecasts-'));
    try {
      say(`${label}: copying ${dataDir} to ${copy}`);
      cpSync(dataDir, copy, { recursive: true });
      if (!pool) {
        say('reading the history: who may forecast what');
        pool = (await forecasters(join(copy, 'log'))).filter((f) => f.bodies.length >= 20 && f.handle !== HUB.handle);
        say(`${pool.length} seeded users with 20 or more open Casties to forecast (${pool.slice(0, clients).reduce((n, f) => n + f.bodies.length, 0)} for the first ${clients})`);
      }
      measured.set(root, await measure(label, root, copy, pool));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
  const inOrder = checkouts.map(([, root]) => measured.get(root)!);
  byRound.push(inOrder);
  runs.push(...inOrder);
}

if (readyDir) rmSync(readyDir, { recursive: true, force: true });

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const codes = [...new Set(runs.flatMap((r) => [...r.refusals.keys()]))].sort();
const rows: [string, (r: Figures) => string][] = [
  ['accepted forecasts/s', (r) => f0(r.perSecond)],
  [`  accepted in ${seconds} s`, (r) => f0(r.accepted)],
  [phones > 0 ? "server CPU per accepted forecast (ms; the phones' pages included)" : 'server CPU per accepted forecast (ms)', (r) => f2(r.cpuMsPerForecast)],
  ['latency p50 / p99 / max (ms)', (r) => `${f1(r.p50)} / ${f1(r.p99)} / ${f0(r.max)}`],
  ...codes.map((code): [string, (r: Figures) => string] => [`refused: ${code}`, (r) => f0(r.refusals.get(code) ?? 0)]),
  ['connection errors', (r) => f0(r.errors)],
  ['users who forecast (incl. warm-up)', (r) => f0(r.users)],
  ...(readers > 0
    ? ([
        [`meanwhile ${HUB.handle}'s home feed, ${readers === 1 ? 'one at a time' : `${readers} readers, each one at a time`}: p50 / p99 / max (ms)`, (r) => `${f1(r.reads.p50)} / ${f1(r.reads.p99)} / ${f0(r.reads.max)}`],
        ['  home feeds read', (r) => f0(r.reads.count)],
      ] as [string, (r: Figures) => string][])
    : []),
  ...(phones > 0
    ? ([
        [`meanwhile ${phones} phones read it compressed, without pause: p50 / p99 (ms)`, (r) => `${f1(r.phoneReads.p50)} / ${f1(r.phoneReads.p99)}`],
        ['  compressed home feeds read', (r) => f0(r.phoneReads.count)],
        ['  connection errors, or not a compressed 200', (r) => f0(r.phoneFailures)],
      ] as [string, (r: Figures) => string][])
    : []),
  ['one author reads back each forecast meanwhile: p50 / p99 / max (ms)', (r) => `${f1(r.ownReads.p50)} / ${f1(r.ownReads.p99)} / ${f0(r.ownReads.max)}`],
  ['  read back, of them without the forecast', (r) => `${f0(r.ownReads.count)}, ${f0(r.ownReads.missed)}`],
  ["next read by the last author, once all stopped (ms)", (r) => f1(r.readAfterMs)],
  ['  it shows their forecast', (r) => (r.readSeesWrite ? 'yes' : 'NO')],
];
process.stdout.write(
  `\nforecasts through the gateway on copies of ${dataDir}: ${clients} clients (distinct seeded users, HTTP keep-alive)${readers === 0 ? ', no reader' : ''}, ` +
    `${warmupSeconds} s warm-up, ${seconds} s measured; USER_REQUESTS_PER_MINUTE=${REQUESTS_PER_MINUTE} (the per-user rate limit is not what is measured)\n\n`,
);
const width = Math.max(...rows.map(([name]) => name.length)) + 2;
const col = 26;
process.stdout.write(`${''.padEnd(width)}${runs.map((r) => (r.label.length > col - 2 ? `${r.label.slice(0, col - 5)}...` : r.label).padStart(col)).join('')}\n`);
for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}${runs.map((r) => value(r).padStart(col)).join('')}\n`);
if (compare) {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  const ratios = (of: (f: Figures) => number) => byRound.map(([before, after]) => of(after!) / of(before!));
  const line = (name: string, values: number[]) =>
    process.stdout.write(`${name.padEnd(width)}${values.map((v) => v.toFixed(2)).join(', ')}${values.length > 1 ? `; median ${median(values).toFixed(2)}` : ''}\n`);
  process.stdout.write(`\nthis checkout / before, per round (rounds alternate which goes first):\n`);
  line('accepted forecasts/s', ratios((f) => f.perSecond));
  line('server CPU per accepted forecast', ratios((f) => f.cpuMsPerForecast));
  if (readers > 0) line(`${HUB.handle}'s home feed meanwhile, p99`, ratios((f) => f.reads.p99));
}
