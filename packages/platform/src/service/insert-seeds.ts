import { checkedOnce } from '../ports/document-store.ts';

/**
 * The fields a projection's new document starts with (its `$setOnInsert`), less those the
 * creating update writes itself: an update may not name a field twice. Built once per set of
 * written fields and shared, frozen and checked once (checkedOnce; the stores copy what they
 * insert): a rebuild asks for the same few sets hundreds of thousands of times, and building each
 * anew was 2 % of a thread.
 */
export function insertSeeds<T extends object>(blank: T): (written: readonly string[]) => Partial<T> {
  const seeds = new Map<string, Partial<T>>();
  return (written) => {
    const key = written.join(',');
    let found = seeds.get(key);
    if (!found) seeds.set(key, (found = checkedOnce(Object.fromEntries(Object.entries(blank).filter(([k]) => !written.includes(k))) as Partial<T>)));
    return found;
  };
}
