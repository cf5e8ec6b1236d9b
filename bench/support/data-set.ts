// The seeded history the read-side, home-feed and gateway benchmarks share (npm run seed), kept
// under .tmp/bench between runs: the event log once per size, and beside it a copy whose read
// models this checkout already built (so a measurement does not start with a 5-minute rebuild).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMsOf, startCastie } from './processes.ts';

export interface Sizes {
  users: string;
  groups: string;
  casties: string;
  forecasts: string;
  friends: string;
}

/** The sizes of the read-side issue's data set, overridable by `--users 10000` style flags. */
export function sizesFrom(flag: (name: string, fallback: string) => string): Sizes {
  return { users: flag('users', '10000'), groups: flag('groups', '200'), casties: flag('casties', '20000'), forecasts: flag('forecasts', '500000'), friends: flag('friends', '30') };
}

/** The seeded user with the most frodads (300 at the default sizes), and its password. */
export const HUB = { handle: 'seed0', email: 'seed0@example.com', password: 'seed-password' };

/** A directory holding the seeded event log (`log/`), seeded now when missing. */
export function seededLog(root: string, sizes: Sizes, say: (line: string) => void): string {
  const dir = join(root, '.tmp', 'bench', `read-side-${Object.values(sizes).join('-')}`);
  if (!existsSync(join(dir, 'log'))) {
    say(`seeding ${dir} (once)`);
    mkdirSync(dir, { recursive: true });
    const seeded = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'packages/system/src/seed/cli.ts'), '--data-dir', dir, ...Object.entries(sizes).flatMap(([k, v]) => [`--${k}`, v])], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    if (seeded.status !== 0) throw new Error('seeding failed');
  }
  return dir;
}

/** A copy of the history without read models (or stream indexes): what a fresh install starts from. */
export function freshCopy(seeded: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'castie-bench-'));
  cpSync(join(seeded, 'log'), join(dir, 'log'), { recursive: true, filter: (src) => !src.endsWith('.db') && !src.endsWith('-wal') && !src.endsWith('-shm') });
  return dir;
}

/**
 * A working copy of the history with read models built (by the first start of this checkout,
 * kept for the next runs), to be removed by the caller. A checkout whose read models differ
 * (another projection version or table layout) rebuilds them on its first start in the copy.
 */
export async function readyCopy(root: string, sizes: Sizes, say: (line: string) => void): Promise<string> {
  const seeded = seededLog(root, sizes, say);
  const ready = `${seeded}-ready`;
  if (!existsSync(join(ready, 'read-models'))) {
    say(`building read models in ${ready} (once; minutes)`);
    const dir = freshCopy(seeded);
    const server = await startCastie(root, dir);
    // What a first start goes on with in the background (policies catching up with the history)
    // is done once here, not again in every measurement made on a copy.
    await untilIdle(server.pid, say);
    await server.stop();
    rmSync(ready, { recursive: true, force: true });
    cpSync(dir, ready, { recursive: true });
    rmSync(dir, { recursive: true, force: true });
  }
  const copy = mkdtempSync(join(tmpdir(), 'castie-bench-'));
  cpSync(ready, copy, { recursive: true });
  return copy;
}

/** Resolves once the process used less than 2 % of a core for two seconds in a row (or, never idle, after 5 minutes: said). */
async function untilIdle(pid: number, say: (line: string) => void): Promise<void> {
  const until = Date.now() + 5 * 60_000;
  for (let quiet = 0, last = cpuMsOf(pid); quiet < 2; ) {
    if (Date.now() > until) return say('the first start was still busy after 5 minutes: the copy is kept as it is');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = cpuMsOf(pid);
    quiet = now - last < 20 ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * Measures `compare` (when given) and this checkout, one after the other, on one working copy of
 * the seeded history with read models, removed afterwards.
 */
export async function sideBySide<F>(root: string, sizes: Sizes, compare: string | null, say: (line: string) => void, measure: (label: string, checkout: string, dir: string) => Promise<F>): Promise<F[]> {
  const dir = await readyCopy(root, sizes, say);
  const runs: F[] = [];
  try {
    if (compare) runs.push(await measure(`before (${compare.split('/').at(-1)})`, compare, dir));
    runs.push(await measure('this checkout', root, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}
