import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { forgetProjections, type Projection, type ReadModelCopies } from '../service/projections.ts';
import { openSqliteDocumentStore, type SqliteDocumentStore } from './sqlite-document-store.ts';

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
 * Where the new read-model file `path` is made (a rebuild thread's, see
 * SqliteDocumentStoreOptions.privateFile) until it is moved into place: a crash or a power cut
 * while it is made leaves no half-made database at `path`, only this file, which the next try
 * removes first.
 */
export const partialOf = (path: string): string => `${path}.partial`;

/** Removes what a try to make `path` left behind (a crash, a thread that failed): its partial file and any journal of it. */
export function removePartial(path: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${partialOf(path)}${suffix}`, { force: true });
}

/**
 * Moves the closed partial file of `path` into place: synced, renamed, and the rename synced, so
 * `path` is whole or absent after a crash. A log or journal left beside `path` by a file deleted
 * before (an operator removing only the database after a crash) goes first: SQLite would apply
 * it to the new file.
 */
export function moveIntoPlace(path: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
  const fd = openSync(partialOf(path), 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(partialOf(path), path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/**
 * Starts the partial file of the new read-model file `path` (partialOf) as a copy of the finished
 * file `from`, less the read models of `extra` (see fileToStartFrom), and says whether it did: a
 * copy of the file costs a fraction of a second where copying its tables one by one and indexing
 * them again took seconds each (friendships: 2-3 s on the seeded history). Only a file whose
 * writer closed it (all in the file, no WAL left) is copied, and nobody may write it meanwhile
 * (its thread has ended). The caller builds on the partial file and moves it into place
 * (moveIntoPlace) once closed.
 */
export async function startAsCopyOf(from: string, path: string, extra: readonly FinishedProjection[]): Promise<boolean> {
  if (existsSync(path)) throw new Error(`${path} exists already: only a new file starts as a copy`);
  if (existsSync(`${from}-wal`) && statSync(`${from}-wal`).size > 0) return false;
  removePartial(path);
  copyFileSync(from, partialOf(path));
  const store = openSqliteDocumentStore({ path: partialOf(path), privateFile: true });
  try {
    await forgetProjections(store, extra.map((p) => ({ name: p.name, collections: (JSON.parse(p.collections) as { name: string }[]).map((c) => c.name) })));
  } finally {
    await store.close();
  }
  return true;
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
