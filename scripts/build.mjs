#!/usr/bin/env node
// The production build: esbuild bundles each entry point of the system (the embedded profile, the
// cluster roles, the operator CLI) with the workspace's own code and its pure-JS dependencies into
// one ES module under packages/system/dist/. Packages that cannot be bundled (native addons,
// drivers with optional native parts) stay external: they are the runtime `dependencies` of
// @castie/system, so `pnpm --filter @castie/system deploy --prod` yields exactly what production
// needs. So does swagger-ui-dist, whose files /docs serves as they are: the gateway finds the
// package from the bundle at run time (createRequire), as it does from the sources. Type checking is `npm run typecheck`; esbuild only strips types.
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const system = join(root, 'packages', 'system');
const outdir = join(system, 'dist');
// The rebuild worker, the projections thread and the SQLite checkpoint thread are entries of their
// own: threads load them by file (src/rebuild/parallel.ts, src/projections-thread/host.ts,
// platform/src/sqlite/background-checkpoints.ts).
const entries = {
  main: 'src/main.ts',
  cluster: 'src/cluster.ts',
  cli: 'src/operator/cli.ts',
  'rebuild-worker': 'src/rebuild/rebuild-worker.ts',
  'projections-thread': 'src/projections-thread/worker.ts',
  'sqlite-checkpoints': '../platform/src/sqlite/checkpoint-worker.ts',
};

// What is not bundled (native addons, served files) is exactly what @castie/system names as its dependencies.
const external = Object.keys(JSON.parse(readFileSync(join(system, 'package.json'), 'utf8')).dependencies ?? {});

const started = Date.now();
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: system,
  entryPoints: Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(join(system, file)))),
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  external,
  // Bundled CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __castieRequire } from 'node:module'; const require = __castieRequire(import.meta.url);" },
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
});
writeFileSync(join(outdir, 'package.json'), JSON.stringify({ type: 'module' }) + '\n');
const bytes = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.js')).reduce((sum, [, o]) => sum + o.bytes, 0);
console.log(`built ${Object.keys(result.metafile.outputs).filter((f) => !f.includes('chunks/') && f.endsWith('.js')).length} entry points into packages/system/dist (${(bytes / 1e6).toFixed(1)} MB of JS, ${Date.now() - started} ms; external: ${external.join(', ')})`);
