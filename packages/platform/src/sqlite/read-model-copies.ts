import type { Projection, ReadModelCopies } from '../service/projections.ts';
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
