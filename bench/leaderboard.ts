// Leaderboards on the seeded history (10k people, 200 groups, 500k forecasts): boards of 150
// and a group page's ranking, timed in the casties service (inject, no gateway; p50/p99), for
// this checkout and, with --compare <checkout>, for another checkout of the code (e.g. a worktree
// of the commit before the sorted sets), on one copy of the same data, in the same run. Also
// prints the start of each (this checkout's first start builds the boards from the log once)
// and whether both showed the same boards.
//
// npm run bench -- leaderboard [--compare <checkout>] [--data <dir with log/ and read-models/>] [--requests 1000]
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB as HUB_USER, readyCopy, sizesFrom } from './support/data-set.ts';
import { benchArgs } from './support/cli.ts';
import { compiledScript } from './support/processes.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const requests = flag('requests', '1000');
const say = (line: string) => process.stderr.write(`leaderboard: ${line}\n`);
const { handle: HUB, password: PASSWORD } = HUB_USER;
if (!compare) say('no --compare <checkout>: measuring this checkout only');

interface Figures {
  label: string;
  startMs: number;
  slug: string;
  followers: number;
  timings: Record<'overall' | 'group' | 'groupPage', { p50: number; p99: number }>;
  shown: { overall: string[]; group: string[]; ranking: { ranking: number; totalRanked: number } };
}

// One copy, never the shared data itself: the read models are written (this checkout adds its boards).
// The seeded history of the read-side issue with its read models (bench/support/data-set.ts), or --data <dir>.
const dir = has('data') ? copyOf(resolve(flag('data', ''))) : await readyCopy(here, sizesFrom(flag), say);
const runs: Figures[] = [];
try {
  const measure = (label: string, root: string): Figures => {
    say(`${label}: start, then ${requests} requests of each kind in the casties service`);
    const out = execFileSync(process.execPath, [...compiledScript('leaderboard-in-service.ts'), root, dir, HUB, PASSWORD, requests], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
    return { label, ...(JSON.parse(out.trim().split('\n').at(-1)!) as Omit<Figures, 'label'>) };
  };
  if (compare) runs.push(measure(`before (${compare})`, compare));
  runs.push(measure('this checkout (first start)', here));
  // Restarted: the boards are kept with the read models, so this is the start users meet.
  runs.push(measure('this checkout', here));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const f1 = (n: number) => n.toFixed(1);
const f3 = (n: number) => n.toFixed(3);
const rows: [string, (r: Figures) => string][] = [
  ['start to ready (s)', (r) => f1(r.startMs / 1000)],
  ['overall board of 150, p50 (ms)', (r) => f3(r.timings.overall.p50)],
  ['overall board of 150, p99 (ms)', (r) => f3(r.timings.overall.p99)],
  ['group board of 150, p50 (ms)', (r) => f3(r.timings.group.p50)],
  ['group board of 150, p99 (ms)', (r) => f3(r.timings.group.p99)],
  ['group page with ranking, p50 (ms)', (r) => f3(r.timings.groupPage.p50)],
  ['group page with ranking, p99 (ms)', (r) => f3(r.timings.groupPage.p99)],
  ['ranking / totalRanked', (r) => `${r.shown.ranking.ranking} / ${r.shown.ranking.totalRanked}`],
];
const last = runs.at(-1)!;
process.stdout.write(`\nleaderboards on the seeded history: user ${HUB}, group ${last.slug} (${last.followers.toLocaleString('en')} followers)\n\n`);
const width = Math.max(...rows.map(([name]) => name.length)) + 2;
const col = 30;
process.stdout.write(`${''.padEnd(width)}${runs.map((r) => (r.label.length > col - 2 ? `${r.label.slice(0, col - 5)}...` : r.label).padStart(col)).join('')}\n`);
for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}${runs.map((r) => value(r).padStart(col)).join('')}\n`);
if (runs.length > 1) {
  const [first] = runs;
  const same = (r: Figures, board: 'overall' | 'group') => JSON.stringify(r.shown[board]) === JSON.stringify(first!.shown[board]);
  process.stdout.write(`\nsame boards as ${first!.label}: overall ${runs.slice(1).every((r) => same(r, 'overall'))}, group ${runs.slice(1).every((r) => same(r, 'group'))}\n`);
}

function copyOf(source: string): string {
  if (!existsSync(join(source, 'log'))) throw new Error(`no seeded data in ${source}`);
  const copy = mkdtempSync(join(tmpdir(), 'castie-leaderboard-'));
  say(`copying ${source} to ${copy}`);
  cpSync(source, copy, { recursive: true });
  return copy;
}
