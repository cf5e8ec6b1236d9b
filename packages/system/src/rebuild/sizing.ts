// How much a rebuild may hold in memory, from the memory the process may use. A first start on a
// long history builds every service's read models: on the seeded history (1.06M events) two
// threads, each holding 100,000 documents between commits and a 256 MiB page cache, peaked at
// about 2 GB, and in a container of 1 GiB the kernel killed the process halfway, every time it
// started again (measured: `memory.limit_in_bytes` of a cgroup, as Docker's `--memory` sets).
// Below the budget a full-speed rebuild needs, it builds in fewer threads, holding less.
import { availableParallelism, totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** The memory this process may use, in bytes: its container's limit (cgroup) when it has one below the machine's, else the machine's. */
export function memoryBudget(): number {
  const total = totalmem();
  // Node reports "no limit" as a huge number (or 0 where it cannot tell).
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 && constrained < total ? constrained : total;
}

/** From this much memory (bytes) a rebuild goes as fast as it can; below, it holds less. */
export const FULL_SPEED_BUDGET = 4 * GiB;

/**
 * From this much memory per thread, and as large a heap (V8's limit, which each thread has too: by
 * default a quarter of the machine's or container's memory, at most about 4 GiB, unless
 * `--max-old-space-size` sets it), a first start's threads hold a million documents between their
 * commits: the documents a later batch changes again (a Castie's view and roster, the forecasts
 * its answer scores, a person's counters) stay parsed instead of being written, let go and read
 * again at each commit. On the seeded history (1.06M events, two threads) the first start took 8 %
 * less time and CPU (three runs side by side: 11, 3.5 and 9 %), and peaked at 2.8 GB instead of
 * 2.1. Three million held was no faster: a thread that never commits (the notifications') keeps a
 * heap its collector goes over again and again.
 */
const GENEROUS_PER_THREAD = 3 * GiB;

export interface RebuildSizing {
  /** Threads building read models side by side at a first start (below 2: none, the services rebuild in turn). */
  threads: number;
  /** Documents each of those threads keeps in memory between its commits. */
  threadHeldDocuments: number;
  /**
   * Documents a rebuild in the serving process keeps in memory between its commits (the stores'
   * deferredDocuments): an operator's, a projection's whose version changed, a first start on a
   * short history, with one file missing, on Redis, or after a thread failed. No more than a
   * thread's: beside the requests the process serves, a commit of a million documents would hold
   * as much memory again as the process serves with, and take seconds to write.
   */
  heldDocuments: number;
  /** The page cache of a store while it is bulk-loaded, in MiB. */
  bulkCacheMiB: number;
}

/**
 * The rebuild's sizing for `budget` bytes of memory and `cpus` threads: at 4 GiB and more, as fast
 * as it goes (100,000 documents held, 256 MiB of page cache: about 1 GB per thread at its peak
 * on the seeded history, so a thread per CPU and per 1.25 GiB; a million held in the threads
 * from 3 GiB of memory and of heap per thread, about 1.4 GB each at its peak); below, each
 * thread holds less and there are fewer of them, down to one rebuild at a time in the process.
 * `heldDocuments` set by the operator (REBUILD_HELD_DOCUMENTS) is kept as it is, by the threads
 * too.
 */
export function rebuildSizing(budget: number, options: { cpus?: number; heldDocuments?: number; heapLimit?: number } = {}): RebuildSizing {
  const cpus = options.cpus ?? availableParallelism();
  const heapLimit = options.heapLimit ?? getHeapStatistics().heap_size_limit;
  const sized = (threads: number, held: number, threadHeld: number, bulkCacheMiB: number): RebuildSizing => ({
    threads,
    threadHeldDocuments: options.heldDocuments ?? threadHeld,
    heldDocuments: options.heldDocuments ?? held,
    bulkCacheMiB,
  });
  if (budget >= FULL_SPEED_BUDGET) {
    const threads = Math.min(cpus, Math.floor(budget / (1.25 * GiB)));
    return sized(threads, 100_000, Math.min(budget / threads, heapLimit) >= GENEROUS_PER_THREAD ? 1_000_000 : 100_000, 256);
  }
  if (budget >= 2 * GiB) return sized(Math.min(cpus, 2), 50_000, 50_000, 128);
  return sized(1, 20_000, 20_000, 32);
}
