import { copyFileSync, existsSync, renameSync, statSync } from 'node:fs';
import type { DocumentStore } from '../ports/document-store.ts';
import { forgetProjections, type Projection, type ReadModelCopies } from '../service/projections.ts';
import type { SqliteDocumentStore } from './sqlite-document-store.ts';

/**
 * A finished projection in one SQLite file: who built it, and the code it was built with (its
 * collection specs as JSON, so a file finished in another thread compares alike).
 */
export interface FinishedProjection {
  name: string;
  version: number;
  collections: string;
}

/** A file holding finished projections another store may copy. */
export interface CopySource {
  group: string;
  path: string;
  projections: FinishedProjection[];
}

/** What a finished projection is, as a copy source names it. */
export const finishedProjection = (p: Projection): FinishedProjection => ({ name: p.name, version: p.version, collections: JSON.stringify(p.collections) });

/** Whether two finished projections are the same code: name, version and the very collection specs (one module declares them). */
export const sameProjection = (a: FinishedProjection, b: FinishedProjection): boolean => a.name === b.name && a.version === b.version && a.collections === b.collections;

/**
 * The finished file a new store is best started as, with what it then holds of no use to it:
 * one with the most of `wanted`'s projections, each the same code, then the fewest others.
 * Null when none shares any.
 */
export function fileToStartFrom(sources: readonly CopySource[], wanted: readonly FinishedProjection[]): { source: CopySource; extra: FinishedProjection[] } | null {
  let best: { source: CopySource; extra: FinishedProjection[]; shared: number } | null = null;
  for (const source of sources) {
    const ours = (p: FinishedProjection) => wanted.some((w) => w.name === p.name);
    // A projection of ours in another version (or with other collections) would have to be rebuilt over the copy: not a start.
    if (source.projections.some((p) => ours(p) && !wanted.some((w) => sameProjection(w, p)))) continue;
    const shared = source.projections.filter(ours).length;
    const extra = source.projections.filter((p) => !ours(p));
    if (shared > 0 && (!best || shared > best.shared || (shared === best.shared && extra.length < best.extra.length))) best = { source, extra, shared };
  }
  return best && { source: best.source, extra: best.extra };
}

/**
 * Starts the new SQLite file at `path` as a copy of the finished file `from`, and says whether it
 * did: a copy of the file costs a fraction of a second where copying its tables one by one and
 * indexing them again took seconds each (friendships: 2-3 s on the seeded history). Only a file
 * whose writer closed it (all in the file, no WAL left) is copied, and nobody may write it
 * meanwhile (its thread has ended). The copy is made under another name and renamed: a crash
 * halfway leaves no half-copied database at `path`.
 */
export function startAsCopyOf(from: string, path: string): boolean {
  if (existsSync(path)) throw new Error(`${path} exists already: only a new file starts as a copy`);
  if (existsSync(`${from}-wal`) && statSync(`${from}-wal`).size > 0) return false;
  const partial = `${path}.partial`;
  copyFileSync(from, partial);
  renameSync(partial, path);
  return true;
}

/** What a store started as a copy of another file holds of no use to it (see fileToStartFrom) goes. */
export async function forgetCopied(store: DocumentStore, extra: readonly FinishedProjection[]): Promise<void> {
  await forgetProjections(store, extra.map((p) => ({ name: p.name, collections: (JSON.parse(p.collections) as { name: string }[]).map((c) => c.name) })));
}

/**
 * The read models one process keeps in several SQLite files (the embedded profile: the groups,
 * casties, social and notifications services each keep their own copy of people, friendships and
 * groups). The first service to rebuild a projection builds it from the log; the ones started
 * after it copy its tables and checkpoints (seconds) instead of applying the whole log again.
 * Each service still owns its copy: the two files share nothing once copied. Files finished
 * elsewhere (a rebuild thread) are added as sources.
 */
export class SqliteReadModelCopies {
  readonly #sources: CopySource[] = [];

  constructor(sources: readonly CopySource[] = []) {
    this.#sources.push(...sources);
  }

  /** The copies as the runner of the store at `store.path` sees them. */
  for(store: Pick<SqliteDocumentStore, 'path' | 'copyFrom'>): ReadModelCopies {
    return {
      copy: async (projection, matching) => {
        const wanted = finishedProjection(projection);
        const from = this.#sources.find((s) => s.path !== store.path && s.projections.some((p) => sameProjection(p, wanted)));
        if (!from) return null;
        await store.copyFrom({ path: from.path }, { collections: projection.collections, matching });
        return from.group;
      },
      offer: (group, projections) => {
        this.#withdraw(store.path);
        this.#sources.push({ group, path: store.path, projections: projections.map(finishedProjection) });
      },
      withdraw: () => this.#withdraw(store.path),
    };
  }

  /** Every file offered so far (and not withdrawn). */
  sources(): readonly CopySource[] {
    return this.#sources;
  }

  #withdraw(path: string): void {
    const kept = this.#sources.filter((s) => s.path !== path);
    this.#sources.splice(0, this.#sources.length, ...kept);
  }
}
