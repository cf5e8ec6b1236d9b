#!/usr/bin/env node
// The project's one entry point for people and CI: `npm start` / `npm test` land here.
// It needs only Node and npm: it finds pnpm (on PATH, through corepack, or through npx), installs
// the workspace on first run, then runs the requested task. Plain JS so it runs before anything is
// installed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [task = 'start', ...rest] = process.argv.slice(2);

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

function works(cmd, args) {
  // Corepack may ask before downloading pnpm; nobody is there to answer in CI.
  const env = { ...process.env, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' };
  const res = spawnSync(cmd, [...args, '--version'], { cwd: root, stdio: 'ignore', timeout: 120_000, env });
  return res.status === 0;
}

/** pnpm as [command, ...prefixArgs]: whichever of the three ways works on this machine. */
function findPnpm() {
  const execPath = process.env.npm_execpath ?? '';
  if (/pnpm/.test(execPath)) return [process.execPath, execPath];
  if (works('pnpm', [])) return ['pnpm'];
  // corepack exists on Node 20 but may fail to verify signatures; then fall back to npx.
  if (works('corepack', ['pnpm'])) return ['corepack', 'pnpm'];
  return ['npx', '-y', 'pnpm@9'];
}

function ensureInstalled(pnpm) {
  const marker = join(root, 'node_modules', '.modules.yaml');
  const lock = join(root, 'pnpm-lock.yaml');
  const fresh = existsSync(marker) && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs);
  if (fresh) return;
  const args = existsSync(lock) ? ['install', '--frozen-lockfile'] : ['install'];
  const code = run(pnpm[0], [...pnpm.slice(1), ...args]);
  if (code !== 0) process.exit(code);
}

const pnpm = findPnpm();
ensureInstalled(pnpm);
const exec = (args, opts) => run(pnpm[0], [...pnpm.slice(1), 'exec', ...args], opts);

switch (task) {
  case 'start':
    process.exit(exec(['tsx', 'packages/system/src/main.ts', ...rest]));
    break;
  case 'test':
    process.exit(runTests());
    break;
  case 'typecheck':
    process.exit(exec(['tsc', '-p', 'tsconfig.json', ...rest]));
    break;
  case 'lint':
    process.exit(exec(['eslint', '--max-warnings=0', '.', ...rest]));
    break;
  case 'bench': {
    const [name = 'all', ...benchArgs] = rest;
    process.exit(exec(['tsx', `bench/${name}.ts`, ...benchArgs]));
    break;
  }
  case 'seed':
    // A year of history written through the services' write side: `npm run seed -- --help`.
    process.exit(exec(['tsx', 'packages/system/src/seed/cli.ts', ...rest]));
    break;
  case 'castie':
    // The operator CLI against a running system's admin API: `npm run castie -- --help`.
    process.exit(exec(['tsx', 'packages/system/src/operator/cli.ts', ...rest]));
    break;
  default:
    console.error(`unknown task ${task}: use start, test, typecheck, lint, bench, seed or castie`);
    process.exit(2);
}

/**
 * Runs every vitest project, then prints one closing line "N passed, N failed, N skipped" counted
 * from the run's JSON report, so CI and people read the same numbers.
 */
/**
 * The Redis adapter's tests run against a real redis-server. Where none is installed and we may
 * install Debian's package (root with apt-get, as in CI), install it; otherwise those tests are
 * reported as skipped, by name, with the reason.
 */
function ensureRedisServer() {
  if (process.env.REDIS_URL || works('redis-server', [])) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !works('apt-get', [])) {
    console.log('redis-server is not installed and cannot be installed here: the Redis adapter tests will be skipped');
    return;
  }
  console.log('installing redis-server from Debian packages for the Redis adapter tests');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (run('apt-get', ['update', '-qq'], { env }) !== 0 || run('apt-get', ['install', '-y', '-qq', 'redis-server'], { env }) !== 0) {
    console.log('installing redis-server failed: the Redis adapter tests will be skipped');
  }
}

function runTests() {
  ensureRedisServer();
  const report = join(root, '.tmp', 'vitest-report.json');
  mkdirSync(dirname(report), { recursive: true });
  const code = exec(['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...rest]);
  let summary = null;
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    const skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
    // A file that fails before any test runs (an import error) counts as one failure.
    const brokenFiles = (json.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((t) => t.status === 'failed')).length;
    const failed = json.numFailedTests + brokenFiles;
    summary = `${json.numPassedTests} passed, ${failed} failed, ${skipped} skipped`;
    const skippedNames = (json.testResults ?? [])
      .flatMap((file) => file.assertionResults ?? [])
      .filter((t) => t.status === 'pending' || t.status === 'skipped' || t.status === 'todo')
      .map((t) => t.fullName);
    if (skippedNames.length > 0) {
      console.log(`\nskipped (${skippedNames.length}):`);
      for (const name of skippedNames) console.log(`  - ${name}`);
    }
  } catch {
    summary = `0 passed, 1 failed, 0 skipped`;
    console.error('the test run wrote no report');
  }
  console.log(`\n${summary}`);
  return code;
}
