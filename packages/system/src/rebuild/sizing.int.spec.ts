import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RebuildSizing } from './sizing.ts';

const GiB = 1024 ** 3;

/** rebuildSizing as a process started with `--max-old-space-size=<heapMiB>` computes it by itself (its heap from V8). */
function sizedIn(heapMiB: number, budget: number): RebuildSizing {
  const script = `import { rebuildSizing } from './sizing.ts'; process.stdout.write(JSON.stringify(rebuildSizing(${budget}, { cpus: 2 })));`;
  const out = execFileSync(process.execPath, [`--max-old-space-size=${heapMiB}`, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: dirname(fileURLToPath(import.meta.url)), encoding: 'utf8' });
  return JSON.parse(out) as RebuildSizing;
}

describe("a rebuild sized by the process's own heap", () => {
  it('holds a million documents in its threads only where V8 gives each a heap of 3 GiB', () => {
    // The threads get the process's heap limit (no resourceLimits): a process whose heap is small holds less, however much memory it has.
    expect(sizedIn(1024, 24 * GiB)).toMatchObject({ threads: 2, threadHeldDocuments: 100_000, heldDocuments: 100_000 });
    expect(sizedIn(4096, 24 * GiB)).toMatchObject({ threads: 2, threadHeldDocuments: 1_000_000, heldDocuments: 100_000 });
  });
});
