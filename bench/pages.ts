// Every GET page the app opens, as the seeded user with 300 frodads (seed0) meets it, on the
// seeded history of the read-side issue (10k users, 200 groups, 20k Casties, 500k forecasts):
// each page asked again and again over a keep-alive connection through the whole server
// (`npm start`'s process, credentials checked), one request at a time: the latency a user feels
// on an idle server, page by page, and the slowest pages first in line for work. Every figure for
// this checkout and, with --compare <checkout>, for another checkout on the same data, in the
// same run. GET /api/notifications/ writes too (it marks the list read), so the next read of its
// read models follows a commit, as every read does on a server whose projections keep committing;
// /api/initialize/ is timed before and after it (the first visit is of someone who never read it).
//
// npm run bench -- pages [--compare <checkout>] [--requests 200] [--users 10000 ...]
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB, sideBySide, sizesFrom } from './support/data-set.ts';
import { startCastie } from './support/processes.ts';
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

async function measure(label: string, root: string, dir: string): Promise<Figures> {
  say(`${label}: starting on the seeded data`);
  const server = await startCastie(root, dir);
  const base = `http://127.0.0.1:${server.port}`;
  // Node's fetch keeps the connection alive between requests made one after another.
  const get = async (path: string): Promise<string> => {
    const res = await fetch(`${base}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${label}: GET ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return text;
  };
  const pages = new Map<string, Page>();
  try {
    const slugs = (JSON.parse(await get(`/api/profile/${HUB.handle}/groups/?slugs_only=True`)) as { myGroups: string[] | Record<string, unknown> }).myGroups;
    const slug = (Array.isArray(slugs) ? slugs : Object.keys(slugs)).sort()[0]!;
    const castie = (JSON.parse(await get('/api/home/following/?ids=true')) as { castie_ids: string[] }).castie_ids[0]!;
    for (const page of PAGES) {
      const path = page.replaceAll('{slug}', slug).replaceAll('{castie}', castie);
      const bytes = Buffer.byteLength(await get(path));
      for (let i = 0; i < 20; i++) await get(path);
      const times: number[] = [];
      for (let i = 0; i < requests; i++) {
        const started = performance.now();
        await get(path);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
      pages.set(page, { bytes, p50: at(0.5), p90: at(0.9) });
      say(`${label}: ${path} p50 ${at(0.5).toFixed(2)} ms`);
    }
  } finally {
    await server.stop();
  }
  return { label, pages };
}

const runs = await sideBySide(here, sizes, compare, say, measure);

const f2 = (n: number) => n.toFixed(2);
const rows: [string, (r: Figures) => string][] = [];
for (const page of PAGES) rows.push([`${page} (${Math.round(runs.at(-1)!.pages.get(page)!.bytes / 1024)} KB)`, (r) => `${f2(r.pages.get(page)!.p50)} / ${f2(r.pages.get(page)!.p90)}`]);
process.stdout.write(`\nevery page as ${HUB.handle} (300 frodads), one request at a time, ${requests} each; p50 / p90 in ms; ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}\n\n`);
printTable(runs, rows);
