import { describe, expect, it } from 'vitest';
import { rebuildSizing } from './sizing.ts';

const GiB = 1024 ** 3;

describe('a rebuild sized by the memory the process may use', () => {
  it('goes full speed from 4 GiB, holds less in fewer threads below, and down to one rebuild at a time', () => {
    expect(rebuildSizing(4 * GiB, { cpus: 2, heapLimit: 4 * GiB })).toEqual({ threads: 2, threadHeldDocuments: 100_000, heldDocuments: 100_000, bulkCacheMiB: 256 });
    // About 1 GB per thread at its peak: no more threads than 1.25 GiB each, however many CPUs.
    expect(rebuildSizing(4 * GiB, { cpus: 8 })).toEqual({ threads: 3, threadHeldDocuments: 100_000, heldDocuments: 100_000, bulkCacheMiB: 256 });
    expect(rebuildSizing(3 * GiB, { cpus: 8 })).toEqual({ threads: 2, threadHeldDocuments: 50_000, heldDocuments: 50_000, bulkCacheMiB: 128 });
    expect(rebuildSizing(1 * GiB, { cpus: 8 })).toEqual({ threads: 1, threadHeldDocuments: 20_000, heldDocuments: 20_000, bulkCacheMiB: 32 });
  });

  it("holds a million documents in each thread from 3 GiB of memory and heap per thread, and no more than a thread's in the serving process", () => {
    // 24 GiB and two cores (where the figures in sizing.ts come from), V8's heap of about 4 GiB there.
    const heapLimit = 4 * GiB;
    expect(rebuildSizing(24 * GiB, { cpus: 2, heapLimit })).toEqual({ threads: 2, threadHeldDocuments: 1_000_000, heldDocuments: 100_000, bulkCacheMiB: 256 });
    expect(rebuildSizing(24 * GiB, { cpus: 8, heapLimit })).toEqual({ threads: 8, threadHeldDocuments: 1_000_000, heldDocuments: 100_000, bulkCacheMiB: 256 });
    expect(rebuildSizing(6 * GiB, { cpus: 2, heapLimit })).toEqual({ threads: 2, threadHeldDocuments: 1_000_000, heldDocuments: 100_000, bulkCacheMiB: 256 });
    // Just under 3 GiB a thread: as before.
    expect(rebuildSizing(16 * GiB, { cpus: 8, heapLimit }).threadHeldDocuments).toBe(100_000);
    expect(rebuildSizing(5.9 * GiB, { cpus: 2, heapLimit }).threadHeldDocuments).toBe(100_000);
    // A heap too small for it: in a container of 8 GiB, V8 gives each thread a quarter of it.
    expect(rebuildSizing(8 * GiB, { cpus: 2, heapLimit: 2 * GiB }).threadHeldDocuments).toBe(100_000);
  });

  it('keeps the documents held that the operator set (REBUILD_HELD_DOCUMENTS), in the threads too', () => {
    expect(rebuildSizing(1 * GiB, { cpus: 2, heldDocuments: 5_000 })).toMatchObject({ threadHeldDocuments: 5_000, heldDocuments: 5_000 });
    expect(rebuildSizing(24 * GiB, { cpus: 2, heldDocuments: 300_000 })).toMatchObject({ threadHeldDocuments: 300_000, heldDocuments: 300_000 });
  });
});
