// The loader hooks of compiled-sources.mjs: `.ts` files are compiled by esbuild with the
// repository's compiler options that change the output (tsconfig.base.json), as one module each.
// Their source maps are inline, for `--enable-source-maps` when a trace should point into the
// sources; as in production (dist/), they are not applied by default.
import { transform } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const tsconfigRaw = { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true } };

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: path, tsconfigRaw });
  return { format: 'module', source: code, shortCircuit: true };
}
