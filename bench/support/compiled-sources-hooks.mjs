// The loader hooks of compiled-sources.mjs: `.ts` files are compiled by esbuild with the
// repository's compiler options (tsconfig.base.json, read here rather than written again; esbuild
// takes those that change its output), as one module each. Their source maps are inline, for
// `--enable-source-maps` when a trace should point into the sources; as in production (dist/),
// they are not applied by default.
import { transform } from 'esbuild';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const tsconfigRaw = readFileSync(new URL('../../tsconfig.base.json', import.meta.url), 'utf8');

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: path, tsconfigRaw });
  return { format: 'module', source: code, shortCircuit: true };
}
