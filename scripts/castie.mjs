#!/usr/bin/env node
// The project's one entry point for people and CI: `npm start` / `npm test` land here.
// It needs only Node and npm: on first run it installs the workspace with the pinned pnpm (on
// PATH, through corepack, or through npx) and builds packages/system/dist; `start` then runs the
// built server inside this process, so `npm start` is two processes (npm, node). Plain JS so it
// runs before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [task = 'start', ...rest] = process.argv.slice(2);
/** Whether this run already refreshed apt's package lists (declared before the task switch runs). */
let aptUpdated = false;

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

function versionOf(cmd, args) {
  // Corepack may ask before downloading pnpm; nobody is there to answer in CI.
  const env = { ...process.env, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' };
  const res = spawnSync(cmd, [...args, '--version'], { cwd: root, encoding: 'utf8', timeout: 120_000, env });
  return res.status === 0 ? res.stdout.trim() : null;
}
const works = (cmd, args) => versionOf(cmd, args) !== null;

/** The pnpm this repository pins (`packageManager` in package.json). */
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.replace(/^pnpm@/, '').split('+')[0];

/**
 * The pinned pnpm as [command, ...prefixArgs]: the one running this script, the one on PATH or
 * corepack's when they are that version, else npx fetches exactly that version (corepack may
 * exist and still fail to verify signatures). Looked up only when a task needs pnpm.
 */
let pnpmFound = null;
function pnpm() {
  if (pnpmFound) return pnpmFound;
  const execPath = process.env.npm_execpath ?? '';
  if (/pnpm/.test(execPath) && versionOf(process.execPath, [execPath]) === pinned) pnpmFound = [process.execPath, execPath];
  else if (versionOf('pnpm', []) === pinned) pnpmFound = ['pnpm'];
  else if (versionOf('corepack', ['pnpm']) === pinned) pnpmFound = ['corepack', 'pnpm'];
  else pnpmFound = ['npx', '-y', `pnpm@${pinned}`];
  return pnpmFound;
}

/**
 * Installs the workspace when node_modules is missing, older than the lockfile, or was installed
 * without devDependencies (as `NODE_ENV=production pnpm install` does): the build needs them. The
 * install itself always includes them, whatever NODE_ENV says.
 */
function ensureInstalled() {
  const marker = join(root, 'node_modules', '.modules.yaml');
  const lock = join(root, 'pnpm-lock.yaml');
  const complete = existsSync(marker) && /devDependencies: true/.test(readFileSync(marker, 'utf8'));
  if (complete && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs)) return;
  const { NODE_ENV: _ignored, ...env } = process.env;
  const args = existsSync(lock) ? ['install', '--frozen-lockfile', '--prod=false'] : ['install', '--prod=false'];
  const [cmd, ...prefix] = pnpm();
  const code = run(cmd, [...prefix, ...args], { env });
  if (code !== 0) process.exit(code);
}

const dist = join(root, 'packages', 'system', 'dist');
const builtStamp = join(dist, '.built');

/** The newest modification time of the sources the build reads (TypeScript, manifests, the lockfile). */
function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) if (entry !== 'node_modules' && entry !== 'dist') visit(join(path, entry));
    } else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const area of ['packages', 'services']) {
    for (const pkg of readdirSync(join(root, area))) {
      const src = join(root, area, pkg, 'src');
      if (existsSync(src)) visit(src);
      const manifest = join(root, area, pkg, 'package.json');
      if (existsSync(manifest)) visit(manifest);
    }
  }
  for (const file of ['pnpm-lock.yaml', 'pnpm-workspace.yaml', 'tsconfig.base.json', 'scripts/build.mjs']) visit(join(root, file));
  return newest;
}

/** Builds packages/system/dist when it is missing or older than a source (a few seconds). */
function ensureBuilt() {
  if (existsSync(builtStamp) && statSync(builtStamp).mtimeMs >= newestSource()) return;
  const started = new Date();
  const code = run(process.execPath, [join(root, 'scripts', 'build.mjs')]);
  if (code !== 0) process.exit(code);
  // Stamped with the time the build began: a source saved while it ran is newer, so built next time.
  writeFileSync(builtStamp, `${started.toISOString()}\n`);
  utimesSync(builtStamp, started, started);
}

/** Runs a built entry point in this very process: no pnpm, tsx or shell between npm and the server. */
async function runBuilt(entry, args) {
  process.argv = [process.argv[0], join(dist, entry), ...args];
  await import(pathToFileURL(join(dist, entry)).href);
}

const exec = (args, opts) => {
  const [cmd, ...prefix] = pnpm();
  return run(cmd, [...prefix, 'exec', ...args], opts);
};

ensureInstalled();
switch (task) {
  case 'start':
    ensureBuilt();
    await runBuilt('main.js', rest);
    break;
  case 'build':
    ensureBuilt();
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
    // Compiled as the production build compiles (bench/support/compiled-sources.mjs), not through
    // tsx: a bench that runs the services in its own process then measures the code `npm start` runs.
    const [name, ...benchArgs] = rest;
    const benches = readdirSync(join(root, 'bench')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
    if (!name || !benches.includes(name)) {
      console.error(`${name ? `no bench named ${name}` : 'name a bench'}: npm run bench -- <${benches.join(' | ')}> [options] (each file in bench/ says what it measures and its options)`);
      process.exit(2);
    }
    process.exit(run(process.execPath, ['--import', './bench/support/compiled-sources.mjs', `bench/${name}.ts`, ...benchArgs]));
    break;
  }
  case 'seed':
    // A year of history written through the services' write side: `npm run seed -- --help`.
    process.exit(exec(['tsx', 'packages/system/src/seed/cli.ts', ...rest]));
    break;
  case 'castie':
    // The operator CLI against a running system's admin API: `npm run castie -- --help`.
    ensureBuilt();
    await runBuilt('cli.js', rest);
    break;
  default:
    console.error(`unknown task ${task}: use start, build, test, typecheck, lint, bench, seed or castie`);
    process.exit(2);
}

/**
 * Installs a Debian package some tests need, when this user can (root with apt-get); otherwise,
 * or when it fails, says which tests will be skipped (they skip themselves, by name).
 */
function aptInstall(pkg, skipped) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !works('apt-get', [])) {
    console.log(`${pkg} is not installed and cannot be installed here: ${skipped} will be skipped`);
    return;
  }
  console.log(`installing ${pkg} from Debian packages for ${skipped}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated && run('apt-get', ['update', '-qq'], { env }) !== 0) return console.log(`installing ${pkg} failed: ${skipped} will be skipped`);
  aptUpdated = true;
  if (run('apt-get', ['install', '-y', '-qq', pkg], { env }) !== 0) console.log(`installing ${pkg} failed: ${skipped} will be skipped`);
}

/**
 * The Redis adapter's tests run against a real redis-server. Where none is installed and we may
 * install Debian's package (root with apt-get, as in CI), install it; otherwise those tests are
 * reported as skipped, by name, with the reason.
 */
function ensureRedisServer() {
  if (process.env.REDIS_URL || works('redis-server', [])) return;
  aptInstall('redis-server', 'the Redis adapter tests');
}

/** Debian's chromium, which the /docs page test drives headless through playwright-core (never a downloaded browser). */
function ensureChromium() {
  if (existsSync('/usr/bin/chromium')) return;
  aptInstall('chromium', 'the /docs page test in headless Chromium');
}

/**
 * Runs every vitest project, then prints one closing line "N passed, N failed, N skipped" counted
 * from the run's JSON report, so CI and people read the same numbers. The names of skipped and
 * failed tests come just before it, so the tail of a CI log says what failed.
 */
function runTests() {
  ensureRedisServer();
  ensureChromium();
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
    const failedNames = (json.testResults ?? []).flatMap((file) => {
      const tests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
      // A file can fail outside its tests (an import error, a hook, an error after them): say what its report says.
      if (tests.length === 0 && file.status === 'failed') return [`${relative(root, file.name)} (the file failed outside its tests: ${String(file.message ?? 'no message').split('\n')[0]})`];
      return tests.map((t) => `${relative(root, file.name)} > ${t.fullName}`);
    });
    if (failedNames.length > 0) {
      console.log(`\nfailed (${failedNames.length}):`);
      for (const name of failedNames) console.log(`  - ${name}`);
    }
  } catch {
    summary = `0 passed, 1 failed, 0 skipped`;
    console.error('the test run wrote no report');
  }
  console.log(`\n${summary}`);
  return code;
}
