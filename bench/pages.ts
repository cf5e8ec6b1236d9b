// Every GET page the app opens, as the seeded user with 300 frodads (seed0) meets it, on the
// seeded history of the read-side issue (10k users, 200 groups, 20k Casties, 500k forecasts):
// each page asked again and again over a keep-alive connection through the whole server
// (`npm start`'s process, credentials checked), one request at a time: the latency a user feels
// on an idle server, page by page, and the slowest pages first in line for work.
//
// With --compare <checkout>, both checkouts run at once, each on its own copy of the same data,
// and their requests alternate (A B, B A, ...): this machine's load drifts by tens of percent
// within minutes, and checkouts measured one after the other showed it as differences of code.
// Each server also sees the same history of requests: GET /api/notifications/ writes (it marks
// the list read), so /api/initialize/ is timed before it (someone who never read the list) and
// after it (only what came since counts).
//
// npm run bench -- pages [--compare <checkout>] [--requests 200] [--users 10000 ...]
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rmSync } from 'node:fs';
import { HUB, readyCopy, sizesFrom } from './support/data-set.ts';
import { startCastie, type RunningServer } from './support/processes.ts';
import { benchArgs, printTable } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, compare } = benchArgs();
const sizes = sizesFrom(flag);
const requests = Number(flag('requests', '200'));
const say = (line: string) => process.stderr.write(`pages: ${line}\n`);
const headers = { authorization: `Basic ${Buffer.from(`${HUB.email}:${HUB.password}`).toString('base64')}` };

/** The pages, with `{slug}` (a group seed0 follows) and `{castie}` (the first of seed0's home) filled in at run time. */
const PAGES = [
  '/api/initialize/',
  '/api/casties/needsanswer/',
  '/api/preferences/',
  '/api/home/following/',
  '/api/home/spicy/',
  '/api/casties/{castie}/',
  '/api/casties/{castie}/comments/',
  '/api/casties/create/groups/',
  '/api/leaderboard/',
  '/api/leaderboard/{slug}/',
  '/api/search/people/?q=se',
  '/api/search/groups/?q=g',
  '/api/search/casties/?q=will',
  `/api/profile/${HUB.handle}/mycasties/`,
  `/api/profile/${HUB.handle}/stats/`,
  `/api/profile/${HUB.handle}/groups/`,
  `/api/profile/${HUB.handle}/frodads/`,
  '/api/groups/',
  '/api/groups/{slug}/',
  '/api/groups/{slug}/followers/',
  '/api/groups/{slug}/followers/frodads/',
  '/api/groups/{slug}/accuracy/',
  '/api/frodad-requests/',
  '/api/notifications/',
  // The app opens again once the list was read (above): the indicator counts only what came since.
  // A fragment names a second visit of a page in another state; it is not sent.
  '/api/initialize/#after-the-list-was-read',
];

interface Page {
  bytes: number;
  p50: number;
  p90: number;
}
interface Figures {
  label: string;
  pages: Map<string, Page>;
}

/** One checkout's server on its own copy of the data, and a GET that must answer 200. */
interface Target {
  label: string;
  server: RunningServer;
  dir: string;
  get(path: string): Promise<string>;
}

async function start(label: string, root: string): Promise<Target> {
  const dir = await readyCopy(here, sizes, say);
  say(`${label}: starting on a copy of the seeded data`);
  const server = await startCastie(root, dir);
  const base = `http://127.0.0.1:${server.port}`;
  // Node's fetch keeps the connection alive between requests made one after another.
  const get = async (path: string): Promise<string> => {
    const res = await fetch(`${base}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${label}: GET ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return text;
  };
  return { label, server, dir, get };
}

const targets: Target[] = [];
try {
  if (compare) targets.push(await start(`before (${compare.split('/').at(-1)})`, compare));
  targets.push(await start('this checkout', here));
  const first = targets[0]!;
  const slugs = (JSON.parse(await first.get(`/api/profile/${HUB.handle}/groups/?slugs_only=True`)) as { myGroups: string[] | Record<string, unknown> }).myGroups;
  const slug = (Array.isArray(slugs) ? slugs : Object.keys(slugs)).sort()[0]!;
  const castie = (JSON.parse(await first.get('/api/home/following/?ids=true')) as { castie_ids: string[] }).castie_ids[0]!;
  const figures: Figures[] = targets.map((t) => ({ label: t.label, pages: new Map() }));
  for (const page of PAGES) {
    const path = page.replaceAll('{slug}', slug).replaceAll('{castie}', castie);
    const bytes = await Promise.all(targets.map(async (t) => Buffer.byteLength(await t.get(path))));
    for (let i = 0; i < 20; i++) for (const t of targets) await t.get(path);
    const times: number[][] = targets.map(() => []);
    for (let i = 0; i < requests; i++) {
      // Alternating which goes first, so neither always follows the other's request.
      const order = i % 2 === 0 ? targets.map((_, k) => k) : targets.map((_, k) => targets.length - 1 - k);
      for (const k of order) {
        const started = performance.now();
        await targets[k]!.get(path);
        times[k]!.push(performance.now() - started);
      }
    }
    targets.forEach((t, k) => {
      const sorted = times[k]!.sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
      figures[k]!.pages.set(page, { bytes: bytes[k]!, p50: at(0.5), p90: at(0.9) });
    });
    say(`${path}: p50 ${figures.map((f) => `${f.pages.get(page)!.p50.toFixed(2)} ms`).join(' / ')}`);
  }
  report(figures);
} finally {
  for (const t of targets) {
    await t.server.stop();
    rmSync(t.dir, { recursive: true, force: true });
  }
}

function report(runs: Figures[]): void {
  const f2 = (n: number) => n.toFixed(2);
  const before = runs.length > 1 ? runs[0]! : null;
  // The last column also gives its p50 as a share of the first's: below 1, this checkout is faster.
  const cell = (r: Figures, page: string): string => {
    const { p50, p90 } = r.pages.get(page)!;
    const ratio = before && r !== before ? ` (${(p50 / before.pages.get(page)!.p50).toFixed(2)})` : '';
    return `${f2(p50)} / ${f2(p90)}${ratio}`;
  };
  const rows: [string, (r: Figures) => string][] = PAGES.map((page) => [`${page} (${Math.round(runs.at(-1)!.pages.get(page)!.bytes / 1024)} KB)`, (r) => cell(r, page)]);
  const how = before ? ', the checkouts side by side, requests alternating; (ratio of p50s)' : '';
  process.stdout.write(`\nevery page as ${HUB.handle} (300 frodads), one request at a time, ${requests} each${how}; p50 / p90 in ms; ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}\n\n`);
  printTable(runs, rows, 28);
}
