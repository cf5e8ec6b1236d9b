/**
 * Runs `work` over `items` with at most `limit` of them in flight, in the items' order of start.
 * Many commands in flight is what makes the seed fast: the embedded log writes every append that
 * arrives during a sync with the next write and one fdatasync (group commit).
 *
 * The first failure stops new items from starting; the ones in flight finish, then it is thrown.
 * A seed that skipped a failed command would write a history other than the one it reports.
 */
export async function inFlight<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>, done: (count: number) => void): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
        done(1);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
