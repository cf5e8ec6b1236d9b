import type { CollectionSpec, Doc } from '../ports/document-store.ts';
import type { ReadModelCopies } from '../service/projections.ts';
import type { SqliteDocumentStore } from './sqlite-document-store.ts';

/** A finished projection on one store: who built it, and the code it was built with. */
interface Finished {
  group: string;
  store: SqliteDocumentStore;
  version: number;
  collections: readonly CollectionSpec<Doc>[];
}

/**
 * The read models one process keeps in several SQLite files (the embedded profile: the groups,
 * casties, social and notifications services each keep their own copy of people, friendships and
 * groups). The first service to rebuild a projection builds it from the log; the ones started
 * after it copy its tables and checkpoints (seconds) instead of applying the whole log again.
 * Each service still owns its copy: the two files share nothing once copied.
 */
export class SqliteReadModelCopies {
  /** By projection name: the stores that hold it finished. */
  readonly #finished = new Map<string, Finished[]>();

  /** The copies as the runner of `store` sees them. */
  for(store: SqliteDocumentStore): ReadModelCopies {
    return {
      copy: async (projection, matching) => {
        // The same code: name, version and the very collection specs (one module declares them).
        const from = (this.#finished.get(projection.name) ?? []).find(
          (f) => f.store !== store && f.version === projection.version && f.collections.length === projection.collections.length && f.collections.every((c, i) => c === projection.collections[i]),
        );
        if (!from) return null;
        await store.copyFrom(from.store, { collections: projection.collections, matching });
        return from.group;
      },
      offer: (group, projections) => {
        for (const p of projections) {
          const list = this.#finished.get(p.name) ?? [];
          this.#finished.set(p.name, [...list.filter((f) => f.store !== store), { group, store, version: p.version, collections: p.collections }]);
        }
      },
      withdraw: () => {
        for (const [name, list] of this.#finished) this.#finished.set(name, list.filter((f) => f.store !== store));
      },
    };
  }
}
