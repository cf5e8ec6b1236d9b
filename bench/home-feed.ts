// The home tabs and search as a user meets them, on the seeded history of the read-side issue
// (10k users, 200 groups, 20k Casties, 500k forecasts; the user with 300 frodads): each page
// through the whole server (`npm start`'s process, HTTP, credentials checked) against a bare
// Fastify process sending the same bytes (the wire limit for that page), and home following in
// the casties service alone (no gateway), and each page as phones ask for it (Accept-Encoding:
// gzip, deflate, br; the server compresses every page of 1 KiB or more). Every figure for this checkout and, with --compare
// <checkout>, for another checkout of the code on the same data, in the same run.
//
// npm run bench -- home-feed [--compare <checkout>] [--seconds 5] [--users 10000 ...]
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB, sideBySide, sizesFrom } from './support/data-set.ts';
import { compiledScript, load, startBareFastify, startCastie, type Load } from './support/processes.ts';
import { benchArgs, printTable } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, compare } = benchArgs();
const sizes = sizesFrom(flag);
const seconds = Number(flag('seconds', '5'));
const say = (line: string) => process.stderr.write(`home-feed: ${line}\n`);
const auth = { authorization: `Basic ${Buffer.from(`${HUB.email}:${HUB.password}`).toString('base64')}` };
/** What iOS's URLSession sends (OkHttp on Android asks for gzip alone). */
const PHONE = { ...auth, 'accept-encoding': 'gzip, deflate, br' };
const PAGES = ['/api/home/following/', '/api/home/spicy/', '/api/home/new/', '/api/search/casties/?q=will'];

interface PageFigures {
  bytes: number;
  gateway10: Load;
  bare10: Load;
  gateway50: Load;
  /** Through the server, 10 connections, asking for a compressed answer. */
  compressed10: Load;
}
interface Figures {
  label: string;
  pages: Map<string, PageFigures>;
  inService: { p50: number; p99: number };
}

async function measure(label: string, root: string, dir: string): Promise<Figures> {
  say(`${label}: starting on the seeded data`);
  const server = await startCastie(root, dir);
  const pages = new Map<string, PageFigures>();
  try {
    for (const path of PAGES) {
      const url = `http://127.0.0.1:${server.port}${path}`;
      const first = await fetch(url, { headers: { ...auth, 'accept-encoding': 'identity' } });
      if (first.status !== 200) throw new Error(`${label}: GET ${path} answered ${first.status}: ${(await first.text()).slice(0, 200)}`);
      const body = Buffer.from(await first.arrayBuffer());
      const bare = await startBareFastify(root, body, first.headers.get('content-type') ?? 'application/json');
      say(`${label}: ${path} (${Math.round(body.length / 1024)} KB), ${seconds} s per row`);
      await load(url, { connections: 10, seconds: 1, headers: auth });
      const gateway10 = await load(url, { connections: 10, seconds, headers: auth });
      const bare10 = await load(`http://127.0.0.1:${bare.port}${path}`, { connections: 10, seconds });
      const gateway50 = await load(url, { connections: 50, seconds, headers: auth });
      const compressed10 = await load(url, { connections: 10, seconds, headers: PHONE });
      await bare.stop();
      pages.set(path, { bytes: body.length, gateway10, bare10, gateway50, compressed10 });
    }
  } finally {
    await server.stop();
  }
  say(`${label}: home following in the casties service`);
  const out = execFileSync(process.execPath, [...compiledScript('in-service.ts'), root, dir, HUB.handle, HUB.password, '1000'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 });
  const inService = JSON.parse(out.trim().split('\n').at(-1)!) as Figures['inService'];
  return { label, pages, inService };
}

const runs = await sideBySide(here, sizes, compare, say, measure);

const f0 = (n: number) => Math.round(n).toLocaleString('en');
const f2 = (n: number) => n.toFixed(2);
const rows: [string, (r: Figures) => string][] = [['home following in the service: p50 / p99 (ms)', (r) => `${f2(r.inService.p50)} / ${f2(r.inService.p99)}`]];
for (const path of PAGES) {
  const p = (r: Figures) => r.pages.get(path)!;
  rows.push(
    [`${path} (${Math.round(p(runs[0]!).bytes / 1024)} KB)`, () => ''],
    ['  through the server, 10 conn: req/s', (r) => f0(p(r).gateway10.requestsPerSecond)],
    ['  bare Fastify, same bytes, 10 conn: req/s', (r) => f0(p(r).bare10.requestsPerSecond)],
    ['  ratio server / bare', (r) => f2(p(r).gateway10.requestsPerSecond / p(r).bare10.requestsPerSecond)],
    ['  through the server, 50 conn: p50 / p99 (ms)', (r) => `${f0(p(r).gateway50.p50)} / ${f0(p(r).gateway50.p99)}`],
    ['  compressed, as phones ask, 10 conn: req/s', (r) => f0(p(r).compressed10.requestsPerSecond)],
    ['    bytes on the wire per answer', (r) => f0(p(r).compressed10.bytesPerRequest)],
    ['  errors + timeouts, non-2xx', (r) => `${p(r).gateway10.errors + p(r).gateway50.errors + p(r).compressed10.errors}, ${p(r).gateway10.non2xx + p(r).gateway50.non2xx + p(r).compressed10.non2xx}`],
  );
}
process.stdout.write(`\nhome tabs and search on ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(', ')}; as ${HUB.handle} (300 frodads); ${seconds} s per row\n\n`);
printTable(runs, rows);
