import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import {
  DeferredUnitsLostError,
  DuplicateKeyError,
  refuseUndefined,
  type Collection,
  type CollectionSpec,
  type Doc,
  type DocumentStore,
  type Filter,
  type UnitOfWork,
  type UpdateResult,
} from '../ports/document-store.ts';
import { LRUCache } from 'lru-cache';
import type { DocumentsMatching } from '../service/projections.ts';
import { backgroundCheckpoints } from './background-checkpoints.ts';
import { DocumentCache } from './document-cache.ts';
import { IdFilter } from './id-filter.ts';
import { applyUpdate, applyUpdateOrNothing, cloneJson, getPath, isOperatorObject, matches, protoRefused, refuseConflictingPaths, regexFor, seedFromFilter, undoUpdates, writableCopy, type JsonObject, type Undo } from './json-documents.ts';
import { compileFilter, compileSort, fieldExpr, jsonPath, quoteIdent, sqlValue, type Membership, type TableShape } from './sql-filter.ts';

export interface SqliteDocumentStoreOptions {
  /** The database file (created when missing), or `:memory:`. */
  path: string;
  /** Page cache of the writer while bulk-loading a rebuild, in MiB (default 256). */
  bulkCacheMiB?: number;
  /** Page cache of each connection while serving, in MiB (default 8; both connections also map the file). */
  cacheMiB?: number;
  /** How much of the file each connection maps into memory, in MiB (default 1024): reads without system calls. The writer maps none during a bulk load (less memory at the same speed). */
  mapMiB?: number;
  /** Parsed committed documents kept for reads, in MiB of estimated heap (default 16; 0: none): about 5 MB of JSON, thousands of Casties and people. */
  documentCacheMiB?: number;
  /**
   * Deferred units of work (a rebuild's batches, see `transaction`) are committed once they hold
   * more than this many documents (default 100,000: some 100-150 MB of heap on Castie's read
   * models), so that a long history's rebuild does not keep them all in memory.
   */
  deferredDocuments?: number;
  /**
   * The file is this store's alone, and is thrown away should the process stop before `close`: a
   * rebuild thread's new file, built under another name and renamed into place once closed
   * (read-model-copies.ts, moveIntoPlace). One connection (nobody reads the file meanwhile), its
   * rollback journal in memory and no syncs: each page reaches the file once, where WAL wrote it
   * to the log and again into the file at each checkpoint. Side by side on the seeded history,
   * one core each: 5-7 % less time per thread. A crash midway may leave the file corrupt, and
   * the journal holds, until each commit, the pages it changed that the file had before (some
   * 150 MB at the peak of a thread holding a million documents). The next open without it puts
   * the file in WAL mode.
   */
  privateFile?: boolean;
  /** WAL checkpoints in the process's checkpoint thread while serving (default true; files only), instead of inside commits. */
  backgroundCheckpoints?: boolean;
  /**
   * Another store of the file, in another thread of the process, has its WAL checkpointed in the
   * background (the main thread's, while this one is the projections thread's writer): this one
   * keeps only the safety net of its own commits, and starts no checkpoint thread of its own.
   */
  checkpointedElsewhere?: boolean;
  /**
   * Told, once they are committed (or rolled back), of the documents this store's writes changed:
   * their ids in a table, or null for the whole table (dropped, copied into). For a writer in
   * another thread than the file's readers: their store's `changedElsewhere` takes it.
   */
  onChanged?: (table: string, ids: readonly string[] | null) => void;
}

/** The SQLite adapter, plus what its own tests look at. */
export interface SqliteDocumentStore extends DocumentStore {
  /** The database file (or `:memory:`). */
  readonly path: string;
  /**
   * Copies documents from another store's file into this one, in one transaction that reads one
   * consistent snapshot of the other: every document of `collections`, and those of `matching`
   * that match its filter (their existing copies here are replaced). The collections must be empty
   * here (just dropped, not bulk-loaded); their secondary indexes are built once the rows are in.
   * Much faster than rebuilding the same read model from the log (rows are copied as they are).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- collections of any document type, as a projection names them
  copyFrom(source: Pick<SqliteDocumentStore, 'path'>, what: { collections: readonly CollectionSpec<any>[]; matching?: readonly DocumentsMatching[] }): Promise<number>;
  /**
   * Another connection (a projection writer in another thread) committed changes to these
   * documents (ids, or null: the whole table): what this store cached of them is read again.
   */
  changedElsewhere(table: string, ids: readonly string[] | null): void;
  /** Another connection committed what it could not tell (it ended): everything cached is read again. */
  allChangedElsewhere(): void;
  /** SQLite's plan for a find, one line per step (tests check that indexes serve the queries). */
  explain<T extends Doc>(spec: CollectionSpec<T>, filter: Filter<T>, options?: { sort?: Record<string, 1 | -1>; limit?: number }): string[];
}

type Statement = Database.Statement<unknown[], unknown>;
type Row = { id: string; doc: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Answers of more documents than this are not kept (see `answers`): a feed page is 101. */
const ANSWER_MAX_IDS = 128;
/** At most this many `$in` values are merged as index ranges (SQLite allows 500 compound terms). */
const MERGE_MAX = 64;

/**
 * The table layout this code writes (PRAGMA user_version). A file of another layout is emptied:
 * every projection then finds no version of its own and is rebuilt from the log.
 */
const LAYOUT = 2;

/**
 * WAL checkpoints a commit runs itself, in bytes of WAL. While serving, the process's checkpoint
 * thread keeps the WAL small (background-checkpoints.ts), and a commit checkpoints only past 16 MB,
 * should that thread fall behind or fail. Without the thread: every 4 MB, SQLite's default size.
 * Measured (bench live): at 64 MB, the checkpoint's fsync held the event loop 100-150 ms, stalling
 * every request in flight (the write p99); at 4 MB it is a few ms, but several times a second under
 * load. During a bulk load (a rebuild): every 64 MB in the loading connection, fewer copies of the
 * same pages.
 */
const SERVING_CHECKPOINT_BYTES = 4 * 1024 * 1024;
const BACKGROUND_SAFETY_NET_BYTES = 16 * 1024 * 1024;
const BULK_CHECKPOINT_BYTES = 64 * 1024 * 1024;
/** A unit of its own that updated more documents than this leaves none in the document cache (see committedUnit). */
const CACHED_PER_COMMIT = 1_000;
/** Documents the commit of deferred units writes between two turns of the event loop. */
const FLUSH_CHUNK = 5_000;

function startOver(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === LAYOUT) return;
  const objects = db.prepare(`SELECT type, name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[];
  for (const { name } of objects) db.exec(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
  db.pragma(`user_version = ${LAYOUT}`);
}

/** One connection with its prepared statements, the regexp() of $regex, and our pragmas. */
class Connection {
  readonly db: Database.Database;
  readonly #statements = new Map<string, Statement>();
  /** Writes through a WAL (a file's writer, unless private): only then are there checkpoints to pace. */
  readonly #wal: boolean;

  constructor(path: string, options: { readonly: boolean; cacheMiB: number; mapMiB?: number; privateFile?: boolean }) {
    this.db = new Database(path, { readonly: options.readonly });
    this.#wal = !options.readonly && path !== ':memory:' && !options.privateFile;
    if (!options.readonly && path !== ':memory:') {
      // 4 KB pages (SQLite's default; for a new file: an existing one keeps its own). Serving, a
      // commit writes every page it touched in full, and a forecast touches about twenty pages
      // of random rows and indexes across the services: 16 KB pages wrote 370 KB of WAL per
      // forecast. Measured side by side (bench forecasts, the seeded history VACUUMed to each
      // size, two runs): 4 KB +18-25% accepted forecasts/s, 9-10% less CPU each; a first start
      // rebuilding 1.06M events 4% slower (within the machine's noise), peak memory 1.6 -> 1.2 GB.
      this.db.pragma('page_size = 4096');
      if (options.privateFile) {
        // See SqliteDocumentStoreOptions.privateFile. Not OFF: an attempt's savepoint rolls back through the journal.
        this.db.pragma('journal_mode = MEMORY');
        this.db.pragma('synchronous = OFF');
      } else {
        // WAL: readers never block the writer. NORMAL: a crash may lose the last commits but never
        // corrupts; read models come back from the log anyway (their checkpoints commit with them).
        this.db.pragma('journal_mode = WAL');
        this.db.pragma('synchronous = NORMAL');
        this.db.pragma('journal_size_limit = 67108864');
        this.checkpointEvery(SERVING_CHECKPOINT_BYTES);
      }
    }
    this.cacheSize(options.cacheMiB);
    if (options.mapMiB) this.mapSize(options.mapMiB);
    this.db.pragma('temp_store = MEMORY');
    this.db.function('castie_regexp', { deterministic: true }, (pattern, flags, value) => (typeof value === 'string' && regexFor(String(pattern), String(flags)).test(value) ? 1 : 0));
  }

  /**
   * Sets how much WAL (in bytes, as pages of this file's size) a commit lets pile up before it
   * checkpoints it into the database (file-backed writers only). The checkpoint runs inside that
   * commit, on the event loop, and first fsyncs the WAL: with synchronous = NORMAL nothing wrote
   * it back before, so it costs about the WAL's size in disk writes.
   */
  checkpointEvery(bytes: number): void {
    if (!this.#wal) return;
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    this.db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(bytes / pageSize))}`);
  }

  /** Maps this much of the file into memory for reads (0: none). */
  mapSize(mib: number): void {
    this.db.pragma(`mmap_size = ${mib * 1024 * 1024}`);
  }

  /** Sets the page cache; a smaller one gives its memory back at once. */
  cacheSize(mib: number): void {
    this.db.pragma(`cache_size = -${mib * 1024}`);
    this.db.pragma('shrink_memory');
  }

  /** A cached prepared statement (bounded: filters of varying shape must not grow it forever). */
  prepare(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      if (this.#statements.size >= 2000) this.#statements.clear();
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  forget(): void {
    this.#statements.clear();
  }
}

/**
 * The tables whose side tables a bulk load left unwritten (see Table.sidesPending), until they are
 * filled: a bulk load that ends without endBulkLoad (stopped, crashed, a thread that failed) has
 * them filled when the table is next set up, instead of answering array queries from a side
 * table missing the rows it loaded. Not a collection name (those begin with a letter or _).
 */
const UNFILLED_SIDES = quoteIdent('$unfilled_sides');

/** The side tables of a table whose side tables are pending: none. */
const NO_SIDES: ReadonlyMap<string, string> = new Map();

const isDuplicate = (error: unknown): boolean => (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';

/** One collection's table: its layout and how a document becomes a row. */
class Table implements TableShape {
  readonly q: string;
  readonly columns = new Map<string, string>();
  readonly arrays: ReadonlySet<string>;
  /** The side table (quoted name) of each indexed array field: one row per element and document. */
  readonly sides = new Map<string, string>();
  /**
   * While the table is bulk-loaded: its side tables are not written row by row (a Castie's search
   * terms, forty each; both people of each friendship), and are filled in one sorted pass when
   * its indexes are built (or, should the load never end, when the table is next set up: the file
   * says so, UNFILLED_SIDES). Queries meanwhile test the documents' arrays themselves, as they scan
   * for want of the other indexes too. Writing them row by row was 5-8 % of a rebuild's thread.
   */
  sidesPending = false;

  /** The side tables queries may use (none while they are pending). */
  get multikey(): ReadonlyMap<string, string> {
    return this.sidesPending ? NO_SIDES : this.sides;
  }
  /** Indexes by their keys: [path, direction][]. */
  readonly indexes: [string, 1 | -1][][];
  readonly #columnList: [string, string][];

  constructor(
    readonly name: string,
    readonly spec: CollectionSpec<Doc>,
    private readonly writer: Connection,
    /** Secondary indexes wait for `buildIndexes` (the store's endBulkLoad) (a rebuild loads first, then sorts once). */
    private deferred: boolean,
  ) {
    if (!NAME.test(name)) throw new Error(`invalid collection name "${name}": use letters, digits and _`);
    this.q = quoteIdent(name);
    this.arrays = new Set<string>(spec.arrays ?? []);
    this.indexes = (spec.indexes ?? []).map((index) => Object.entries(index.keys) as [string, 1 | -1][]);
    for (const keys of this.indexes) {
      const [first] = keys[0] ?? [];
      if (first === undefined) throw new Error(`an index of ${name} has no keys`);
      if (this.arrays.has(first)) {
        if (keys.length > 1) throw new Error(`the multikey index on ${name}.${first} must have that one key`);
        this.sides.set(first, quoteIdent(`${name}$${first}`));
        continue;
      }
      for (const [path] of keys) {
        if (this.arrays.has(path.split('.')[0]!)) throw new Error(`the array field ${path} of ${name} can only be the single key of its index`);
        if (path !== '_id') this.columns.set(path, quoteIdent(`$${path}`));
      }
    }
    this.#columnList = [...this.columns];
    this.sidesPending = deferred && this.sides.size > 0;
    this.create();
  }

  /**
   * Creates the table, its index columns (filled from the documents) and indexes; drops what the
   * spec no longer names. A rowid table: rows append in rowid order and secondary index entries
   * carry an 8-byte rowid instead of the text id, which keeps random inserts cheap.
   */
  private create(): void {
    const db = this.writer.db;
    const absent = (table: string) => !db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table);
    if (absent(this.name)) this.madeUnreadable = true;
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.q} (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)`);
    const existing = new Set((db.prepare(`PRAGMA table_info(${this.q})`).all() as { name: string }[]).map((c) => c.name));
    const indexNames = new Set(this.indexes.filter((keys) => !this.arrays.has(keys[0]![0])).map((keys) => this.indexName(keys)));
    for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE ?`).all(this.name, `${this.name}$%`) as { name: string }[]) {
      if (!indexNames.has(name) || this.deferred) db.exec(`DROP INDEX ${quoteIdent(name)}`);
    }
    for (const column of existing) {
      if (column.startsWith('$') && !this.columns.has(column.slice(1))) db.exec(`ALTER TABLE ${this.q} DROP COLUMN ${quoteIdent(column)}`);
    }
    for (const [path, column] of this.columns) {
      if (existing.has(`$${path}`)) continue;
      this.madeUnreadable = true;
      db.exec(`ALTER TABLE ${this.q} ADD COLUMN ${column}`);
      db.exec(`UPDATE ${this.q} SET ${column} = json_extract(doc, '${jsonPath(path)}')`);
    }
    for (const keys of this.indexes) {
      const [first] = keys[0]!;
      if (this.arrays.has(first)) {
        const side = this.sides.get(first)!;
        const fresh = absent(`${this.name}$${first}`);
        if (fresh) this.madeUnreadable = true;
        db.exec(`CREATE TABLE IF NOT EXISTS ${side} (k, id TEXT NOT NULL, PRIMARY KEY (k, id)) WITHOUT ROWID`);
        db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.name}$${first}$id`)} ON ${side} (id)`);
        if (fresh) db.exec(`INSERT OR IGNORE INTO ${side} (k, id) SELECT e.value, t.id FROM ${this.q} t, json_each(t.doc, '${jsonPath(first)}') e`);
        continue;
      }
      if (this.deferred) continue;
      const columns = keys.map(([path, dir]) => `${path === '_id' ? 'id' : this.columns.get(path)!}${dir === -1 ? ' DESC' : ''}`);
      db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(this.indexName(keys))} ON ${this.q} (${columns.join(', ')})`);
    }
    for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?`).all(`${this.name}$%`) as { name: string }[]) {
      if (![...this.sides.keys()].some((field) => `${this.name}$${field}` === name)) db.exec(`DROP TABLE ${quoteIdent(name)}`);
    }
    if (this.sides.size === 0) return;
    if (this.sidesPending) db.prepare(`INSERT OR IGNORE INTO ${UNFILLED_SIDES} (name) VALUES (?)`).run(this.name);
    // Left unwritten by a bulk load that did not end (see UNFILLED_SIDES): filled from the documents now.
    else if (db.prepare(`SELECT 1 FROM ${UNFILLED_SIDES} WHERE name = ?`).get(this.name) !== undefined) this.fillSides();
  }

  /**
   * Set when setting the table up made what another connection cannot read until it commits: the
   * table itself, an index column, an array field's side table. (Indexes made or dropped change
   * no query's answer, nor whether it runs.)
   */
  madeUnreadable = false;

  /** Builds the indexes that waited (deferred). */
  buildIndexes(): void {
    if (!this.deferred) return;
    this.deferred = false;
    if (this.sidesPending) this.fillSides();
    this.create();
    this.writer.db.exec(`ANALYZE ${this.q}`);
  }

  /**
   * The side tables as `schema`'s (an attached database holding this table, finished), instead of
   * filling them from the documents: in their key order.
   */
  copySidesFrom(schema: string): void {
    this.refillSides((_field, side) => `INSERT INTO main.${side} (k, id) SELECT k, id FROM ${schema}.${side}`);
  }

  /** The side tables from the documents, in one pass each, sorted. */
  private fillSides(): void {
    this.refillSides((field, side) => `INSERT OR IGNORE INTO ${side} (k, id) SELECT e.value, t.id FROM ${this.q} t, json_each(t.doc, '${jsonPath(field)}') e ORDER BY 1, 2`);
  }

  /** Empties each side table, fills it with `insert`'s rows, then makes its index on ids once. */
  private refillSides(insert: (field: string, side: string) => string): void {
    const db = this.writer.db;
    for (const [field, side] of this.sides) {
      const byId = quoteIdent(`${this.name}$${field}$id`);
      db.exec(`DROP INDEX IF EXISTS ${byId}`);
      db.exec(`DELETE FROM ${side}`);
      db.exec(insert(field, side));
      db.exec(`CREATE INDEX ${byId} ON ${side} (id)`);
    }
    this.sidesFilled();
  }

  private sidesFilled(): void {
    this.sidesPending = false;
    this.writer.db.prepare(`DELETE FROM ${UNFILLED_SIDES} WHERE name = ?`).run(this.name);
  }

  private indexName(keys: [string, 1 | -1][]): string {
    return `${this.name}$${keys.map(([path, dir]) => `${path}${dir === -1 ? '-' : ''}`).join(',')}`;
  }

  /** The row's columns as stored (id, doc and the index columns): what a copy of the table copies. */
  get storedColumns(): string[] {
    return ['id', 'doc', ...this.#columnList.map(([, c]) => c)];
  }

  /** Column values of a document, in column order. */
  columnValues(doc: JsonObject): unknown[] {
    return this.#columnList.map(([path]) => sqlValue(getPath(doc, path)));
  }

  /** Distinct elements of each indexed array field. */
  elements(doc: JsonObject): unknown[][] {
    return [...this.sides.keys()].map((field) => {
      const value = doc[field];
      return Array.isArray(value) ? [...new Set(value.map(sqlValue))] : value === undefined ? [] : [sqlValue(value)];
    });
  }

  /** Refuses documents that break the spec: arrays in fields not declared as arrays. */
  check(doc: JsonObject): void {
    for (const key in doc) this.checkField(doc, key);
  }

  /**
   * check, after `update` changed a document that passed it (see Entry.checkWhole): only a
   * top-level field the update names can have become an array (a dotted path makes objects on
   * its way: json-documents.ts, parentOf), and only through an operator that can store one:
   * $inc stores numbers, $unset and $pull remove, and $setOnInsert does not apply to a document
   * that exists (an upsert's new document is checked whole). Every field of a Castie's view was
   * read for each forecast, and a person's every field for each forecast counted.
   */
  checkUpdated(doc: JsonObject, update: JsonObject): void {
    // The update's own operators (see operatorsOf: asking for each of the nine was slower).
    for (const op in update) {
      if (op === '$inc' || op === '$unset' || op === '$pull' || op === '$setOnInsert') continue;
      const fields = update[op] as JsonObject | undefined;
      if (fields) for (const path in fields) if (!path.includes('.')) this.checkField(doc, path);
    }
  }

  private checkField(doc: JsonObject, key: string): void {
    if (Array.isArray(doc[key]) && !this.arrays.has(key)) throw new Error(`${this.name}.${key} holds an array: declare it in the collection's arrays`);
  }

  /**
   * This table's own statements, made once: building their SQL and looking it up in the
   * connection's cache on every write and load was a tenth of a rebuild's time in these methods.
   * A dropped collection gets a new Table (and new statements).
   */
  #statements: { insert: Statement; delete: Statement; docOf: Statement; updates: Map<string, Statement>; sides: Map<string, { insert: Statement; delete: Statement }> } | null = null;

  private get statements() {
    if (!this.#statements) {
      const db = this.writer.db;
      this.#statements = {
        insert: db.prepare(`INSERT INTO ${this.q} (id, doc${this.#columnList.map(([, c]) => `, ${c}`).join('')}) VALUES (?, ?${this.#columnList.map(() => ', ?').join('')})`),
        delete: db.prepare(`DELETE FROM ${this.q} WHERE id = ?`),
        docOf: db.prepare(`SELECT doc FROM ${this.q} WHERE id = ?`).pluck(),
        updates: new Map(),
        sides: new Map([...this.sides.values()].map((side) => [side, { insert: db.prepare(`INSERT OR IGNORE INTO ${side} (k, id) VALUES (?, ?)`), delete: db.prepare(`DELETE FROM ${side} WHERE id = ?`) }])),
      };
    }
    return this.#statements;
  }

  /** The stored text of a document (the writer's view), or undefined. */
  docOf(id: string): string | undefined {
    return this.statements.docOf.get(id) as string | undefined;
  }

  /**
   * While the table is bulk-loaded from empty (a rebuild): the ids of every row inserted since,
   * so that most ids read for the first time (a new forecast, notification, friendship) are known
   * absent without a SELECT, which was a tenth of a rebuild's time. undefined until the store
   * first reads the table; null when not known (it held rows then, or the bulk load ended).
   */
  storedIds: IdFilter | null | undefined = undefined;

  /** Inserts the row; returns it as stored (its index columns and array elements). */
  insert(doc: JsonObject, text: string): Stored {
    const values = this.columnValues(doc);
    this.storedIds?.add(String(doc._id));
    try {
      this.statements.insert.run(doc._id, text, ...values);
    } catch (error) {
      if (isDuplicate(error)) throw new DuplicateKeyError(this.name, '_id_');
      throw error;
    }
    const elements = this.elements(doc);
    this.writeElements(String(doc._id), [], elements);
    return { columns: values, elements };
  }

  /** Updates the row stored as `before`; returns it as stored now. */
  update(id: string, text: string, before: Stored, doc: JsonObject): Stored {
    const values = this.columnValues(doc);
    const changed: number[] = [];
    values.forEach((v, i) => {
      if (v !== before.columns[i]) changed.push(i);
    });
    // Only the columns that changed: SQLite then leaves the indexes of the others alone.
    const { updates } = this.statements;
    const key = changed.join(',');
    let statement = updates.get(key);
    if (!statement) updates.set(key, (statement = this.writer.db.prepare(`UPDATE ${this.q} SET doc = ?${changed.map((i) => `, ${this.#columnList[i]![1]} = ?`).join('')} WHERE id = ?`)));
    statement.run(text, ...changed.map((i) => values[i]), id);
    const elements = this.elements(doc);
    this.writeElements(id, before.elements, elements);
    return { columns: values, elements };
  }

  delete(id: string, before: { elements: unknown[][] }): void {
    this.statements.delete.run(id);
    this.writeElements(id, before.elements, []);
  }

  private writeElements(id: string, before: unknown[][], after: unknown[][]): void {
    if (this.sidesPending) return;
    let i = 0;
    for (const side of this.sides.values()) {
      const old = before[i] ?? [];
      const now = after[i] ?? [];
      i++;
      if (old.length === now.length && old.every((v, j) => v === now[j])) continue;
      const statements = this.statements.sides.get(side)!;
      if (old.length > 0) statements.delete.run(id);
      for (const value of now) statements.insert.run(value, id);
    }
  }
}

/** A row as stored: its index columns' values and its array fields' elements (multikey tables). */
interface Stored {
  columns: unknown[];
  elements: unknown[][];
}

/** A document as a unit of work holds it: the working copy, and what the database holds. */
interface Entry {
  doc: JsonObject | null;
  /** As stored: null when the database has no such document. */
  stored: Stored | null;
  dirty: boolean;
  /**
   * Set when the unit last wrote the document as an update of a row that existed (even one the
   * unit created and wrote earlier): its JSON text's length. Once the unit commits, the document
   * cache may keep it (see `committedUnit`).
   */
  updatedChars?: number;
  /** The last attempt that changed it (Attempt.id; 0: none): its state before that attempt is kept once. */
  attempt: number;
  /**
   * Set when the document was read as check would not let it through (an array in a field the
   * collection no longer declares, written by older code): its updates are checked whole, and so
   * refused, not only in the fields they name (Table.checkUpdated).
   */
  checkWhole?: true;
}

/**
 * An attempt in progress inside a unit (UnitOfWork.attempt): what to put back should it fail. The
 * documents it updates in place come back through the updates' undo (nothing is copied), the
 * entries it changed get their fields back, and rows it wrote to the database (a query flushed a
 * table) are rolled back to a savepoint, opened only then: most attempts write nothing there.
 */
interface Attempt {
  /** Its number, or 0 while none is in progress: a unit keeps one Attempt for all of its attempts, one after another. */
  id: number;
  /** Entries as they were before the attempt first changed them, in that order. */
  readonly before: { entry: Entry; doc: JsonObject | null; stored: Stored | null; dirty: boolean; updatedChars: number | undefined }[];
  /** The undo of its updates made in place, in the order they were made. */
  readonly undo: Undo[];
  /** Once its savepoint is open: the tables set up before (a rollback to it undoes the others' DDL). */
  setUpBefore: Set<string> | null;
  /** The scope it was made in (a held unit serves the scopes of several deferred batches). */
  scope: Scope | null;
}

/**
 * A unit of work: the documents it read or wrote, by table and id. Writes stay here until the
 * unit ends (or a query needs the table), so a batch of events that touches one document many
 * times writes it once.
 */
class Unit {
  readonly entries = new Map<Table, Map<string, Entry>>();
  /**
   * `open`: true while the unit's SQLite transaction is open (SQLite rolls it back by itself on
   * some errors: disk full, I/O). `openSavepoint`: opens an attempt's savepoint on that connection.
   */
  constructor(
    private readonly open: () => boolean,
    private readonly openSavepoint: (attempt: Attempt) => void,
  ) {}
  /** Committed or rolled back: a write still made through its collections is a bug (it would escape the unit). */
  ended = false;
  /** Ids written to the database, by table: they leave the document cache when the unit ends. */
  readonly written = new Map<Table, Set<string>>();
  /** Documents it read or wrote (its entries). */
  size = 0;
  /** Its attempts (see UnitOfWork.attempt), one at a time: `id` is 0 between them. */
  readonly attempt: Attempt = { id: 0, before: [], undo: [], setUpBefore: null, scope: null };
  /**
   * The entry `load` found last, and where: a write by id looks its document up two or three
   * times (the filter's match, then the upsert; a findOne, then the update), and each lookup in a
   * rebuild's map of hundreds of thousands of entries hashes the id and misses the CPU's caches.
   * Entries never leave a unit, so the one found stays right.
   */
  readonly last: { table: Table | null; id: string; entry: Entry | null } = { table: null, id: '', entry: null };

  /** Call before an entry changes: keeps, once per attempt, what it was. */
  touch(entry: Entry): void {
    const attempt = this.attempt;
    if (attempt.id === 0 || entry.attempt === attempt.id) return;
    entry.attempt = attempt.id;
    attempt.before.push({ entry, doc: entry.doc, stored: entry.stored, dirty: entry.dirty, updatedChars: entry.updatedChars });
  }

  of(table: Table): Map<string, Entry> {
    let map = this.entries.get(table);
    if (!map) this.entries.set(table, (map = new Map()));
    return map;
  }

  flush(table: Table): void {
    const map = this.entries.get(table);
    if (!map) return;
    let written: Set<string> | undefined;
    for (const [id, entry] of map) {
      if (!entry.dirty) continue;
      written ??= this.writingTo(table);
      this.write(table, written, id, entry);
    }
  }

  flushAll(): void {
    for (const table of this.entries.keys()) this.flush(table);
  }

  /**
   * flushAll, letting the event loop run every `every` documents written: a commit of deferred
   * units writes up to 100,000 documents (about a second of work), and the other services of an
   * embedded process go on meanwhile (an operator's rebuild while they serve).
   */
  async flushAllYielding(every: number): Promise<void> {
    let n = 0;
    for (const [table, map] of this.entries) {
      let written: Set<string> | undefined;
      for (const [id, entry] of map) {
        if (!entry.dirty) continue;
        written ??= this.writingTo(table);
        this.write(table, written, id, entry);
        if (++n % every !== 0) continue;
        await new Promise<void>((resolve) => setImmediate(resolve));
        written = undefined;
      }
    }
  }

  /** The ids written to a table, before the unit's next writes to it (checked once per run of writes). */
  private writingTo(table: Table): Set<string> {
    // Past a rollback SQLite made by itself, a write would commit alone, outside the unit.
    if (!this.open()) throw new Error(`SQLite rolled the unit's transaction back (disk full or I/O error): its writes are lost`);
    let written = this.written.get(table);
    if (!written) this.written.set(table, (written = new Set()));
    return written;
  }

  private write(table: Table, written: Set<string>, id: string, entry: Entry): void {
    const attempt = this.attempt;
    if (attempt.id !== 0) {
      if (attempt.setUpBefore === null) this.openSavepoint(attempt);
      this.touch(entry);
    }
    written.add(id);
    if (entry.doc === null) {
      if (entry.stored) table.delete(id, entry.stored);
      entry.stored = null;
      entry.updatedChars = undefined;
    } else {
      const text = JSON.stringify(entry.doc);
      if (entry.stored) {
        entry.stored = table.update(id, text, entry.stored, entry.doc);
        entry.updatedChars = text.length;
      } else entry.stored = table.insert(entry.doc, text);
    }
    entry.dirty = false;
  }
}

/**
 * A unit of work as the function given to `transaction` sees it: its collections. The scope ends
 * when that function returns (a deferred run's unit goes on with the next deferred run): a write
 * through its collections made later (not awaited inside) is refused, as after any unit's end.
 */
interface Scope {
  readonly unit: Unit;
  ended: boolean;
  /** Its collections, by their spec, made at their first use. */
  readonly collections: Map<CollectionSpec<Doc>, Collection<Doc>>;
}

/** The unit the running code may still work in: none outside units, or once its scope ended. */
const live = (scope: Scope | undefined): Unit | undefined => (scope && !scope.ended && !scope.unit.ended ? scope.unit : undefined);

/** Plain promise-chain mutex: one unit of work at a time on the writer. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();

  async lock(): Promise<() => void> {
    let release!: () => void;
    const previous = this.#tail;
    this.#tail = new Promise((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

const newId = (): string => randomUUID().replaceAll('-', '');

function project(doc: JsonObject, projection: Record<string, 1> | undefined): JsonObject {
  if (!projection) return doc;
  const out: JsonObject = { _id: doc._id };
  for (const path of Object.keys(projection)) {
    const value = getPath(doc, path);
    if (value === undefined) continue;
    const keys = path.split('.');
    let at = out;
    for (const key of keys.slice(0, -1)) {
      if (key === '__proto__') throw protoRefused(path);
      // Own fields only: `constructor` here is a field like any other, not Object's.
      at = (Object.hasOwn(at, key) ? at[key] : (at[key] = {})) as JsonObject;
    }
    // MongoDB refuses overlapping paths too; here the inner object may be a shared frozen one.
    if (Object.isFrozen(at)) throw new Error(`projection paths collide at ${path}`);
    at[keys.at(-1)!] = value;
  }
  return out;
}

/**
 * The ids a read names when it can be answered document by document: `_id` by equality or `$in`,
 * other top-level fields by equality to a string or null (checked in memory, where they mean
 * what SQL makes of them; numbers and booleans do not, SQL reads true as 1), no sort, skip or
 * limit below the ids.
 */
function idsOnly(filter: JsonObject, options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number }): readonly string[] | null {
  if (options.skip || (options.sort && Object.keys(options.sort).length > 0)) return null;
  for (const key in filter) {
    if (key === '_id') continue;
    const value = filter[key];
    if (key.startsWith('$') || key.includes('.') || (value !== null && typeof value !== 'string')) return null;
  }
  const pinned = pinnedId(filter);
  if (pinned !== null) return [pinned];
  const id = filter._id;
  if (!id || typeof id !== 'object' || Array.isArray(id) || id instanceof RegExp) return null;
  const condition = id as JsonObject;
  if (Object.keys(condition).length !== 1 || !Array.isArray(condition.$in)) return null;
  const values = condition.$in as unknown[];
  for (const value of values) if (typeof value !== 'string') return null;
  // An id named twice is dropped once the documents are in id order (see query).
  return options.limit && options.limit < values.length ? null : (values as string[]);
}

/**
 * What a committed find's answer is kept under: the table and everything that decides the answer
 * (the filter, sort, skip and limit; a projection is applied to the documents afterwards), or null
 * when the filter holds a value the key cannot tell apart from every other (then the answer is not
 * kept). Two different queries never share a key: each value is written with its type.
 */
function answerKey(t: Table, filter: JsonObject, options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number }): string | null {
  const parts = [t.name, '\u0000', String(options.skip ?? 0), ',', String(options.limit ?? 0), ','];
  return keyOf(options.sort ?? null, parts) && keyOf(filter, parts) ? parts.join('') : null;
}

/**
 * Writes a value into `parts` so that different values never write the same text: strings as
 * JSON strings, numbers by `String` (NaN and the infinities apart from null, -0 apart from 0),
 * null, undefined, booleans, RegExps with their flags, arrays and plain objects (keys in their
 * order, as queries read them). False for anything else (a Date, a Map): such a query is not kept.
 */
function keyOf(value: unknown, parts: string[]): boolean {
  switch (typeof value) {
    case 'string':
      parts.push(JSON.stringify(value));
      return true;
    case 'number':
      parts.push('n', Object.is(value, -0) ? '-0' : String(value));
      return true;
    case 'boolean':
      parts.push(value ? 't' : 'f');
      return true;
    case 'undefined':
      parts.push('u');
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) {
    parts.push('z');
    return true;
  }
  if (value instanceof RegExp) {
    parts.push('r', JSON.stringify(value.source), JSON.stringify(value.flags));
    return true;
  }
  if (Array.isArray(value)) {
    parts.push('[');
    for (const item of value) if (!keyOf(item, parts)) return false;
    parts.push(']');
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  parts.push('{');
  for (const key in value) {
    parts.push(JSON.stringify(key), ':');
    if (!keyOf((value as Record<string, unknown>)[key], parts)) return false;
  }
  parts.push('}');
  return true;
}

/** Ids in order (by UTF-16 code units, as `<` compares strings), each once. */
function sortedUnique(ids: readonly string[]): readonly string[] {
  if (ids.length < 2) return ids;
  const sorted = ids.slice().sort();
  let unique = 1;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[unique - 1]) sorted[unique++] = sorted[i]!;
  sorted.length = unique;
  return sorted;
}

/** The `_id` a filter pins down by plain equality, if any. */
function pinnedId(filter: JsonObject): string | null {
  const id = filter._id;
  if (typeof id === 'string') return id;
  if (id && typeof id === 'object' && !Array.isArray(id) && Object.keys(id).length === 1 && Object.hasOwn(id, '$eq') && typeof (id as JsonObject).$eq === 'string') return (id as JsonObject).$eq as string;
  return null;
}

/**
 * Whether the document a filter pinned down (pinnedId) matches it: a filter of its `_id` alone
 * holds by construction (a unit holds each document under its own _id: upsertInsert refuses
 * another), and most writes by id say no more (matching such a filter was 2 % of a rebuild's
 * thread).
 */
function pinnedMatches(doc: JsonObject | null, filter: JsonObject, arrays: ReadonlySet<string>): boolean {
  if (!doc) return false;
  for (const key in filter) if (key !== '_id') return matches(doc, filter, arrays);
  return true;
}

/**
 * The document store port on SQLite (better-sqlite3), one database file per service. Documents
 * are JSON text; every indexed field also lives in its own column, so indexes are plain B-trees
 * over columns, kept up to date only when the value changes; array fields get a multikey table.
 * Filters and sorts compile to SQL; a sort + limit over `$in` values of an index's first key runs
 * as a merge of index ranges (MongoDB's SORT_MERGE), reading about `limit` rows.
 *
 * Two connections on a file: a writer, used by units of work (`transaction`) and single writes,
 * and a reader, which sees only committed data (WAL). Inside a unit, reads go to the writer
 * through the unit's cache, so a projection sees its own writes. Reads of committed data go to
 * the writer too whenever it has no transaction open (see `committed`), else to the reader.
 */
export function openSqliteDocumentStore(options: SqliteDocumentStoreOptions): SqliteDocumentStore {
  const memory = options.path === ':memory:';
  /** The writer is the only connection (in memory, or a private file): reads outside a unit see what an open unit wrote. */
  const oneConnection = memory || options.privateFile === true;
  const servingCache = options.cacheMiB ?? 8;
  const mapMiB = memory ? 0 : (options.mapMiB ?? 1024);
  const writer = new Connection(options.path, { readonly: false, cacheMiB: servingCache, mapMiB, privateFile: options.privateFile === true });
  startOver(writer.db);
  writer.db.exec(`CREATE TABLE IF NOT EXISTS ${UNFILLED_SIDES} (name TEXT PRIMARY KEY) WITHOUT ROWID`);
  const reader = oneConnection ? writer : new Connection(options.path, { readonly: true, cacheMiB: servingCache, mapMiB: options.mapMiB ?? 1024 });
  /**
   * The connection for reads of committed data. SQLite drops a connection's whole page cache
   * (and unmaps its file) when it finds that another connection committed, so on a live service,
   * whose projections commit many times a second, every read on the reader started cold: after
   * one commit, 1,100 activity documents took 15-18 ms to read instead of 3, and a one-row
   * lookup 2 ms. The writer keeps its cache across its own commits. Between units of work it
   * holds no transaction and sees exactly the committed data, so reads go there; only while a
   * unit is open (across its awaits) do they go to the reader.
   */
  const committed = (): Connection => (writer.db.inTransaction ? reader : writer);
  const tables = new Map<string, Table>();
  /** Collections being bulk-loaded: their secondary indexes wait for endBulkLoad. */
  const deferred = new Set<string>();
  /** Tables set up inside the open transaction: a rollback undoes their DDL, so they are set up again. */
  const setUpInTransaction = new Set<string>();
  /**
   * Those of them whose setting up made what the reader cannot read until the commit (the table,
   * an index column, a side table; see Table.madeUnreadable): reads outside answer as if they were
   * empty meanwhile (they are new, or their spec is: a runner sets its collections up before its
   * first batch). When the transaction ends they read as they are again, a change of what reads
   * outside see: the store's committed version moves.
   */
  const unreadableInTransaction = new Set<string>();
  /** The transaction ended (committed or rolled back): tables set up in it are set up for good, or made again. */
  const transactionEnded = (rolledBack: boolean) => {
    if (rolledBack) for (const name of setUpInTransaction) tables.delete(name);
    for (const name of unreadableInTransaction) newGeneration(name);
    setUpInTransaction.clear();
    unreadableInTransaction.clear();
  };
  const cache = new DocumentCache((options.documentCacheMiB ?? 16) * 1024 * 1024);
  /**
   * Answers of committed finds by their SQL and parameters, each with the generation of its
   * table it was read at: a commit that writes a table (or drops it) starts a new generation, and
   * an answer of an older one is read again. Sound for the same reason as the document cache: the
   * store's own commit and its new generation happen in one synchronous step, and another
   * connection's commit starts one once it tells the store (`changedElsewhere`). A feed page's
   * index walk and the group directory's small lists are asked again and again between writes.
   * An answer keeps its documents' ids only: the documents themselves come from the document
   * cache (or are read again), whose budget alone bounds them. The
   * answers are bounded by the characters of their keys and ids (512 KiB: hundreds of feed
   * pages); one of more than ANSWER_MAX_IDS documents (a long scan, such as an export's pages)
   * is not kept at all: such scans are not asked again and again, and keeping them made the
   * export memory test's heap grow past its bound.
   */
  const answers = cache.enabled
    ? new LRUCache<string, { generation: number; ids: string[] }>({ maxSize: 512 * 1024, maxEntrySize: 32 * 1024, sizeCalculation: (a, key) => key.length + a.ids.reduce((n, id) => n + id.length + 8, 0) })
    : null;
  const generations = new Map<string, number>();
  /** Every table's new generation is a new version of the whole store (committedVersion). */
  let version = 0;
  /** SQLite's count of other connections' commits, as committedVersion last read it. */
  let dataVersion = -1;
  const newGeneration = (table: string) => {
    version += 1;
    generations.set(table, (generations.get(table) ?? 0) + 1);
  };
  /** A table written as a whole (dropped, copied into): none of what was cached of it holds. */
  const tableChanged = (name: string) => {
    cache.forgetTable(name);
    newGeneration(name);
    options.onChanged?.(name, null);
  };
  const mutex = new Mutex();
  let closed = false;
  /**
   * The unit of work deferred units share (see `transaction`'s `defer`), with its SQLite
   * transaction open, until it is committed: by the next unit that does not defer, drop, copyFrom,
   * endBulkLoad or close, or once it holds more than `deferredDocuments` documents.
   */
  let held: Unit | null = null;
  const deferredDocuments = options.deferredDocuments ?? 100_000;
  /** Set once deferred units were lost: every later write fails with it, until the store is opened again. */
  let lost: DeferredUnitsLostError | null = null;
  const open = (): boolean => writer.db.inTransaction;
  /** Rolls back what is held and latches the loss (call with the mutex held). */
  function lose(unit: Unit, cause: unknown): DeferredUnitsLostError {
    rollback();
    ended(unit);
    held = null;
    lost ??= new DeferredUnitsLostError(cause);
    return lost;
  }

  /** While serving, the checkpoint thread moves the WAL into the file; its stop, while it does. */
  let stopCheckpoints: (() => Promise<void>) | null = null;
  function serveCheckpoints(): void {
    if (!oneConnection && options.checkpointedElsewhere) return writer.checkpointEvery(BACKGROUND_SAFETY_NET_BYTES);
    if (oneConnection || options.backgroundCheckpoints === false) return writer.checkpointEvery(SERVING_CHECKPOINT_BYTES);
    writer.checkpointEvery(BACKGROUND_SAFETY_NET_BYTES);
    stopCheckpoints ??= backgroundCheckpoints.watch(options.path);
  }
  async function pauseCheckpoints(): Promise<void> {
    const stop = stopCheckpoints;
    stopCheckpoints = null;
    await stop?.();
  }
  serveCheckpoints();

  function table(spec: CollectionSpec<Doc>): Table {
    if (closed) throw new Error('the document store is closed');
    let found = tables.get(spec.name);
    if (!found) {
      found = new Table(spec.name, spec, writer, deferred.has(spec.name));
      tables.set(spec.name, found);
      if (writer.db.inTransaction) setUpInTransaction.add(spec.name);
      if (writer.db.inTransaction && found.madeUnreadable) unreadableInTransaction.add(spec.name);
    } else if (found.spec !== spec && JSON.stringify(found.spec) !== JSON.stringify(spec)) {
      throw new Error(`collection ${spec.name} is declared twice, differently`);
    }
    return found;
  }

  /** Runs a write as part of the current unit, or as a unit of its own. */
  async function writing<R>(scope: Scope | undefined, fn: (unit: Unit) => R): Promise<R> {
    const unit = live(scope);
    if (scope && !unit) throw new Error('a write after its unit of work ended: await every write inside the unit');
    if (unit) return fn(unit);
    const release = await mutex.lock();
    try {
      return await ownUnit(fn);
    } finally {
      release();
    }
  }

  /**
   * Runs `run` in a unit of work of its own and commits it, after what deferred units hold (call
   * with the mutex held).
   */
  async function ownUnit<R>(run: (unit: Unit) => R | Promise<R>): Promise<R> {
    await commitHeld();
    const unit = new Unit(open, openSavepoint);
    writer.db.exec('BEGIN IMMEDIATE');
    let result: R;
    try {
      result = await run(unit);
      unit.flushAll();
      writer.db.exec('COMMIT');
    } catch (error) {
      try {
        rollback();
      } finally {
        ended(unit);
      }
      throw error;
    }
    transactionEnded(false);
    committedUnit(unit);
    return result;
  }

  /** Undoes the open transaction, tables it created included (they are made again on next use). */
  function rollback(): void {
    if (writer.db.inTransaction) writer.db.exec('ROLLBACK');
    transactionEnded(true);
  }

  /**
   * Commits the deferred units (call with the mutex held). If that fails they are rolled back,
   * and DeferredUnitsLostError says so.
   */
  async function commitHeld(): Promise<void> {
    if (lost) throw lost;
    const unit = held;
    if (!unit) return;
    try {
      await unit.flushAllYielding(FLUSH_CHUNK);
      writer.db.exec('COMMIT');
    } catch (error) {
      throw lose(unit, error);
    }
    held = null;
    transactionEnded(false);
    ended(unit);
  }

  /**
   * After a unit of its own committed: the documents it wrote as updates of existing rows are
   * what the database now holds, so the document cache keeps them, and the next unit that changes
   * one (the same person's counters, the same Castie's view, forecast after forecast) starts from
   * a copy instead of reading and parsing its row again; reads of committed data find them too.
   * Documents it created or deleted are forgotten, and so is every document of a unit that
   * updated more than CACHED_PER_COMMIT (an answer scoring all of a Castie's forecasts), which
   * would push hot documents out for cold ones. A rebuild's deferred units forget all (`ended`).
   */
  function committedUnit(unit: Unit): void {
    unit.ended = true;
    let room = CACHED_PER_COMMIT;
    for (const entries of unit.entries.values()) for (const entry of entries.values()) if (entry.updatedChars !== undefined) room--;
    for (const [t, ids] of unit.written) {
      const entries = unit.entries.get(t)!;
      for (const id of ids) {
        const entry = entries.get(id);
        if (room < 0 || !entry?.doc || entry.updatedChars === undefined || !cache.committed(t.name, id, entry.doc, entry.updatedChars)) cache.forget(t.name, [id]);
      }
      newGeneration(t.name);
      options.onChanged?.(t.name, [...ids]);
    }
  }

  /** After a unit's commit or rollback: what it wrote is read from the database again. */
  function ended(unit: Unit): void {
    unit.ended = true;
    for (const [t, ids] of unit.written) {
      cache.forget(t.name, ids);
      newGeneration(t.name);
      options.onChanged?.(t.name, [...ids]);
    }
  }

  /** A document by id within a unit: from its cache, else from the database (then cached). */
  function load(unit: Unit, t: Table, id: string): Entry {
    const last = unit.last;
    if (last.table === t && last.id === id) return last.entry!;
    const map = unit.of(t);
    let entry = map.get(id);
    if (!entry) {
      // First read of a table being bulk-loaded: empty now (no unit holds writes to it unflushed:
      // every write follows a read, and this is the first), so every row it gets is one Table.insert adds.
      if (t.storedIds === undefined) t.storedIds = deferred.has(t.name) && writer.prepare(`SELECT 1 FROM ${t.q} LIMIT 1`).get() === undefined ? new IdFilter() : null;
      const absent = t.storedIds !== null && !t.storedIds.mayHave(id);
      // A committed document the cache holds is the writer's too (one connection writes at a
      // time, and the other's commits were told; the unit has not touched it): a copy, which the unit may change.
      const cached = absent ? null : cache.get(t.name, id);
      const text = cached !== undefined ? undefined : t.docOf(id);
      const doc = cached ? writableCopy(cached) : text === undefined ? null : (JSON.parse(text) as JsonObject);
      entry = { doc, stored: doc ? { columns: t.columnValues(doc), elements: t.elements(doc) } : null, dirty: false, attempt: 0 };
      // Once per document a unit reads, written by older code perhaps (see Entry.checkWhole).
      if (doc) {
        try {
          t.check(doc);
        } catch {
          entry.checkWhole = true;
        }
      }
      map.set(id, entry);
      unit.size++;
    }
    last.table = t;
    last.id = id;
    last.entry = entry;
    return entry;
  }

  /** The SQL of a find, planned on what `db` holds (the writer inside a unit: it sees the unit's tables). */
  function select(db: Connection, t: Table, filter: JsonObject, options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number }): { sql: string; params: unknown[] } {
    const limit = options.limit ?? 0;
    const skip = options.skip ?? 0;
    const merged = mergePlan(t, filter, options.sort, limit);
    if (merged) {
      const { field, values, rest, sortKeys } = merged;
      const params: unknown[] = [];
      const arms = values.map((value) => {
        const where = compileFilter(t, { ...rest, [field]: value }, params);
        return `SELECT id, doc${sortKeys.map(([path], i) => `, ${fieldExpr(t, path)} AS s${i}`).join('')} FROM ${t.q} WHERE ${where}`;
      });
      const order = sortKeys.map(([path, dir], i) => `${path === '_id' ? 'id' : `s${i}`} ${dir === -1 ? 'DESC' : 'ASC'}`).join(', ');
      params.push(limit, skip);
      return { sql: `SELECT id, doc FROM (${arms.join(' UNION ALL ')} ORDER BY ${order} LIMIT ? OFFSET ?)`, params };
    }
    const params: unknown[] = [];
    const where = compileFilter(t, filter, params, '', membershipFor(db, t, filter, limit > 0 && options.sort ? limit + skip : 0));
    let sql = `SELECT id, doc FROM ${t.q} WHERE ${where}${compileSort(t, options.sort)}`;
    if (limit > 0 || skip > 0) {
      sql += ' LIMIT ? OFFSET ?';
      params.push(limit > 0 ? limit : -1, skip);
    }
    return { sql, params };
  }

  /**
   * How a sorted, limited find asks for values of an indexed array field (MongoDB picks between
   * such plans by racing them; SQLite's planner cannot know how common a value is). A common
   * value (a search for "will" among questions that all begin with it) is best found by walking
   * the sort order and testing rows until `wanted` are found; a rare one by reading its few
   * documents and sorting them. The break-even is about sqrt(wanted × table size) matches (the
   * walk reads about wanted × size / matches rows); the rarest value asked for decides, counted
   * from the multikey index up to that bound.
   */
  function membershipFor(db: Connection, t: Table, filter: JsonObject, wanted: number): Membership {
    if (wanted === 0 || t.multikey.size === 0) return 'in';
    const values = multikeyValues(t, filter);
    if (values.length === 0) return 'in';
    const size = (db.prepare(`SELECT max(rid) FROM ${t.q}`).pluck().get() as number | null) ?? 0;
    const bound = Math.max(64, Math.ceil(Math.sqrt(wanted * size)));
    for (const [side, value] of values) {
      const count = db.prepare(`SELECT count(*) FROM (SELECT 1 FROM ${side} WHERE k = ? LIMIT ?)`).pluck().get(sqlValue(value), bound) as number;
      if (count < bound) return 'in';
    }
    return 'exists';
  }

  function query(unit: Unit | undefined, t: Table, filter: JsonObject, options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number; projection?: Record<string, 1> }): JsonObject[] {
    if (unit) {
      const id = pinnedId(filter);
      if (id !== null && !options.skip) {
        const entry = load(unit, t, id);
        return pinnedMatches(entry.doc, filter, t.arrays) ? [project(cloneJson(entry.doc!), options.projection)] : [];
      }
      unit.flush(t);
    }
    // With one connection the reader is the writer: while a unit is open it sees the unit's flushed writes,
    // which the cache must neither serve over nor keep.
    if (unit || (oneConnection && writer.db.inTransaction)) {
      const { sql, params } = select(writer, t, filter, options);
      const rows = writer.prepare(sql).all(...params) as Row[];
      return rows.map((row) => project(JSON.parse(row.doc) as JsonObject, options.projection));
    }
    // A table made inside the open unit (a collection dropped for a rebuild, made again by its
    // first batch) holds nothing committed, and the reader cannot see it yet.
    if (unreadableInTransaction.has(t.name)) return [];
    // Committed data: documents come from the cache when it has them.
    const ids = idsOnly(filter, options);
    if (ids) {
      // The ids hold by construction; the other equalities are checked here. In id order, as the
      // id index gives them, each document once. (A feed page asks this some ten times, for
      // hundreds of ids.) The ids are put in order, not the documents: sorting documents by a
      // field through a comparator was 14 % of a home page's CPU (a property read per comparison
      // on documents of many shapes); strings sort natively.
      let rest: JsonObject | null = null;
      for (const key in filter) if (key !== '_id') (rest ??= {})[key] = filter[key]!;
      const docs = committedByIds(t, sortedUnique(ids));
      let kept = 0;
      for (const doc of docs) if (rest === null || matches(doc, rest, t.arrays)) docs[kept++] = doc;
      docs.length = options.limit ? Math.min(kept, options.limit) : kept;
      return options.projection ? docs.map((doc) => project(doc, options.projection)) : docs;
    }
    // Known by the query itself, not by its SQL: compiling a feed page's query (an index range
    // per followed group, merged) only to look its answer up was 5 % of a home page's CPU.
    const key = answers ? answerKey(t, filter, options) : null;
    const generation = generations.get(t.name) ?? 0;
    const known = key === null ? undefined : answers?.get(key);
    if (known && known.generation === generation) return committedByIds(t, known.ids).map((doc) => project(doc, options.projection));
    const db = committed();
    const { sql, params } = select(db, t, filter, options);
    const rows = db.prepare(sql).all(...params) as Row[];
    if (key !== null && rows.length <= ANSWER_MAX_IDS) answers?.set(key, { generation, ids: rows.map((row) => row.id) });
    return rows.map((row) => project(cache.parsed(t.name, row.id, row.doc), options.projection));
  }

  /**
   * Committed documents by id, in the order given (an id named twice comes twice), from the
   * document cache, else read in one statement (and cached); ids without a document are left out.
   */
  function committedByIds(t: Table, ids: readonly string[]): JsonObject[] {
    const found: (JsonObject | null | undefined)[] = new Array(ids.length);
    let missing: string[] | null = null;
    for (let i = 0; i < ids.length; i++) if ((found[i] = cache.get(t.name, ids[i]!)) === undefined) (missing ??= []).push(ids[i]!);
    if (missing) {
      const read = new Map<string, JsonObject>();
      for (const row of committed().prepare(`SELECT id, doc FROM ${t.q} WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(missing)) as Row[]) read.set(row.id, cache.parsed(t.name, row.id, row.doc));
      for (const id of missing) if (!read.has(id)) cache.absent(t.name, id);
      for (let i = 0; i < ids.length; i++) if (found[i] === undefined) found[i] = read.get(ids[i]!) ?? null;
    }
    const docs: JsonObject[] = [];
    for (const doc of found) if (doc) docs.push(doc);
    return docs;
  }

  /** Ids of matching documents, for writes (the unit's pending writes to the table are flushed first). */
  function matchingIds(unit: Unit, t: Table, filter: JsonObject, limit: number): string[] {
    const id = pinnedId(filter);
    if (id !== null) {
      const entry = load(unit, t, id);
      return pinnedMatches(entry.doc, filter, t.arrays) ? [id] : [];
    }
    unit.flush(t);
    const params: unknown[] = [];
    const where = compileFilter(t, filter, params);
    const sql = `SELECT id FROM ${t.q} WHERE ${where}${limit > 0 ? ` LIMIT ${limit}` : ''}`;
    return writer.prepare(sql).pluck().all(...params) as string[];
  }

  function upsertInsert(unit: Unit, t: Table, filter: JsonObject, make: (id: string) => JsonObject): string {
    const pinned = pinnedId(filter);
    // An _id the filter sets by equality only inside an $and is the new document's, as MongoDB makes it.
    const seeded = pinned === null ? seedFromFilter(filter)._id : undefined;
    const id = pinned ?? (typeof seeded === 'string' ? seeded : newId());
    const entry = load(unit, t, id);
    // The document exists but the filter did not match it: MongoDB refuses the second _id.
    if (entry.doc) throw new DuplicateKeyError(t.name, '_id_');
    const doc = make(id);
    // A filter that names two values of _id (one pinned, another in an $and): MongoDB refuses it
    // too, and the document would be held under an id that is not its own.
    if (doc._id !== id) throw new Error(`an upsert's filter names two values of _id: ${id} and ${String(doc._id)}`);
    t.check(doc);
    unit.touch(entry);
    entry.doc = doc;
    entry.dirty = true;
    return id;
  }

  /** Attempts made so far: each marks the entries it changes with its number. */
  let attempts = 0;

  /** Opens an attempt's savepoint, before its first write to the file. */
  function openSavepoint(attempt: Attempt): void {
    writer.db.exec('SAVEPOINT castie_attempt');
    attempt.setUpBefore = new Set(setUpInTransaction);
  }

  /** UnitOfWork.attempt: `fn` inside the scope's unit, all or nothing. */
  async function attemptIn<R>(scope: Scope, fn: () => Promise<R>): Promise<R> {
    const unit = live(scope);
    if (!unit) throw new Error('an attempt after its unit of work ended: await every write inside the unit');
    const attempt = unit.attempt;
    if (attempt.id !== 0) {
      if (attempt.scope === scope || !attempt.scope?.ended) throw new Error('attempts inside a unit of work do not nest');
      // One of an earlier deferred batch, not awaited inside it: it can write no more (its scope
      // ended), and when it settles it finds itself replaced and puts nothing back.
      endAttempt(attempt);
    }
    const id = (attempt.id = ++attempts);
    attempt.scope = scope;
    let result: R;
    try {
      result = await fn();
    } catch (error) {
      // Settled after its unit ended (not awaited inside it): the connection's transaction, and
      // any savepoint of that name, belong to another unit now; nothing here is put back.
      if (live(scope) !== unit || attempt.id !== id) throw new Error('an attempt settled after its unit of work ended: await every attempt inside the unit', { cause: error });
      try {
        putBack(attempt);
      } finally {
        endAttempt(attempt);
      }
      throw error;
    }
    if (live(scope) !== unit || attempt.id !== id) throw new Error('an attempt settled after its unit of work ended: await every attempt inside the unit');
    try {
      if (attempt.setUpBefore !== null && writer.db.inTransaction) writer.db.exec('RELEASE castie_attempt');
    } finally {
      endAttempt(attempt);
    }
    return result;
  }

  function endAttempt(attempt: Attempt): void {
    attempt.id = 0;
    attempt.scope = null;
    attempt.before.length = 0;
    attempt.undo.length = 0;
    attempt.setUpBefore = null;
  }

  /** Undoes a failed attempt: its documents, its entries, then its rows (see Attempt). */
  function putBack(attempt: Attempt): void {
    undoUpdates(attempt.undo);
    for (let i = attempt.before.length - 1; i >= 0; i--) {
      const { entry, doc, stored, dirty, updatedChars } = attempt.before[i]!;
      entry.doc = doc;
      entry.stored = stored;
      entry.dirty = dirty;
      entry.updatedChars = updatedChars;
    }
    const setUpBefore = attempt.setUpBefore;
    if (setUpBefore === null || !writer.db.inTransaction) return;
    try {
      writer.db.exec('ROLLBACK TO castie_attempt');
      writer.db.exec('RELEASE castie_attempt');
    } catch (error) {
      // The unit cannot be put back as it was: it must not commit at all. Rolled back whole, it
      // fails when its function returns (or at its next write), as when SQLite rolls it back itself.
      writer.db.exec('ROLLBACK');
      throw error;
    }
    // The tables it set up: their DDL may have been undone with it; set up again when next used.
    for (const name of setUpInTransaction) {
      if (setUpBefore.has(name)) continue;
      tables.delete(name);
      setUpInTransaction.delete(name);
    }
  }

  /** What `transaction` hands its function: the collections of its scope, each made once. */
  function unitOfWork(scope: Scope): UnitOfWork {
    return {
      atomic: true,
      attempt: (fn) => attemptIn(scope, fn),
      collection<T extends Doc>(spec: CollectionSpec<T>): Collection<T> {
        const base = spec as unknown as CollectionSpec<Doc>;
        let found = scope.collections.get(base);
        if (!found) scope.collections.set(base, (found = collection(base, scope)));
        return found as unknown as Collection<T>;
      },
    };
  }

  /**
   * The store's own collection (no scope: committed reads, each write a unit of its own), or one
   * of a unit of work (its scope: reads see the unit's writes, writes join it).
   */
  function collection<T extends Doc>(spec: CollectionSpec<T>, scope?: Scope): Collection<T> {
    const base = spec as unknown as CollectionSpec<Doc>;
    table(base);
    const t = () => table(base);
    const asFilter = (filter: unknown) => refuseUndefined('filter', (filter ?? {}) as JsonObject);
    const asUpdate = (update: unknown) => refuseUndefined('update', update as JsonObject);

    const handle = {
      name: spec.name,

      inAtomicUnit: () => scope !== undefined,

      async findOne(filter: unknown, options: { sort?: Record<string, 1 | -1>; projection?: Record<string, 1> } = {}) {
        return query(live(scope), t(), asFilter(filter), { ...options, limit: 1 })[0] ?? null;
      },

      async find(filter: unknown, options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number; projection?: Record<string, 1> } = {}) {
        return query(live(scope), t(), asFilter(filter), options);
      },

      async byIds(ids: readonly string[]) {
        refuseUndefined('filter', ids);
        const found = new Map<string, JsonObject>();
        if (ids.length === 0) return found;
        const tb = t();
        // Inside a unit of work (or while the only connection is in one), through query: it sees
        // the unit's own writes.
        const unit = live(scope);
        const throughQuery = unit !== undefined || (oneConnection && writer.db.inTransaction) || unreadableInTransaction.has(tb.name);
        const docs = throughQuery ? query(unit, tb, { _id: { $in: [...ids] } }, {}) : committedByIds(tb, ids);
        for (const doc of docs) found.set(doc._id as string, doc);
        return found;
      },

      async countDocuments(filter?: unknown) {
        const tb = t();
        const unit = live(scope);
        if (unit) unit.flush(tb);
        else if (!oneConnection && unreadableInTransaction.has(tb.name)) return 0;
        const params: unknown[] = [];
        const where = compileFilter(tb, asFilter(filter), params);
        return (unit ? writer : committed()).prepare(`SELECT count(*) FROM ${tb.q} WHERE ${where}`).pluck().get(...params) as number;
      },

      async countBy(filter: unknown, field: string) {
        const tb = t();
        if (tb.arrays.has(field)) throw new Error(`countBy groups by a text field, and ${tb.name}.${field} holds arrays`);
        const unit = live(scope);
        if (unit) unit.flush(tb);
        else if (!oneConnection && unreadableInTransaction.has(tb.name)) return new Map<string | null, number>();
        const params: unknown[] = [];
        const where = compileFilter(tb, asFilter(filter), params);
        const sql = `SELECT ${fieldExpr(tb, field)}, count(*) FROM ${tb.q} WHERE ${where} GROUP BY 1`;
        return new Map((unit ? writer : committed()).prepare(sql).raw().all(...params) as [string | null, number][]);
      },

      insertOne(doc: T) {
        return writing(scope, (unit) => {
          const tb = t();
          const copy = cloneJson(doc) as unknown as JsonObject;
          tb.check(copy);
          const entry = load(unit, tb, doc._id);
          if (entry.doc) throw new DuplicateKeyError(tb.name, '_id_');
          unit.touch(entry);
          entry.doc = copy;
          entry.dirty = true;
        });
      },

      replaceOne(filter: unknown, doc: T, options: { upsert?: boolean } = {}) {
        return writing(scope, (unit): UpdateResult => {
          const tb = t();
          const f = asFilter(filter);
          const [id] = matchingIds(unit, tb, f, 1);
          const copy = cloneJson(doc) as unknown as JsonObject;
          if (id !== undefined) {
            if (copy._id !== id) throw new Error(`replaceOne cannot change _id ${id} to ${String(copy._id)}`);
            tb.check(copy);
            const entry = load(unit, tb, id);
            const changed = JSON.stringify(entry.doc) !== JSON.stringify(copy);
            if (changed) {
              unit.touch(entry);
              entry.doc = copy;
              entry.dirty = true;
            }
            return { matchedCount: 1, modifiedCount: changed ? 1 : 0, upsertedId: null };
          }
          if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
          const upsertedId = upsertInsert(unit, tb, { ...f, _id: copy._id }, () => copy);
          return { matchedCount: 0, modifiedCount: 0, upsertedId };
        });
      },

      updateOne(filter: unknown, update: unknown, options: { upsert?: boolean } = {}) {
        return writing(scope, (unit) => updateWhere(unit, t(), asFilter(filter), asUpdate(update), { upsert: options.upsert ?? false, many: false }));
      },

      updateMany(filter: unknown, update: unknown) {
        return writing(scope, (unit) => updateWhere(unit, t(), asFilter(filter), asUpdate(update), { upsert: false, many: true }));
      },

      deleteOne(filter: unknown) {
        return writing(scope, (unit) => deleteWhere(unit, t(), asFilter(filter), 1));
      },

      deleteMany(filter?: unknown) {
        return writing(scope, (unit) => deleteWhere(unit, t(), asFilter(filter), 0));
      },
    };
    return handle as unknown as Collection<T>;
  }

  function updateWhere(unit: Unit, t: Table, filter: JsonObject, update: JsonObject, options: { upsert: boolean; many: boolean }): UpdateResult {
    const ids = matchingIds(unit, t, filter, options.many ? 0 : 1);
    let modified = 0;
    for (const id of ids) {
      const entry = load(unit, t, id);
      // All or nothing: an update that fails partway leaves the unit's document as it was, so the
      // unit never writes (nor the cache keeps) part of an update whose event was dead-lettered.
      unit.touch(entry);
      if (applyUpdateOrNothing(entry.doc!, update, false, (doc) => (entry.checkWhole ? t.check(doc) : t.checkUpdated(doc, update)), unit.attempt.id !== 0 ? unit.attempt.undo : undefined)) {
        entry.dirty = true;
        modified++;
      }
    }
    // An update refused for its paths is refused whether it matched or not, as on MongoDB.
    if (ids.length === 0 && !options.upsert) refuseConflictingPaths(update);
    if (ids.length > 0 || !options.upsert) return { matchedCount: ids.length, modifiedCount: modified, upsertedId: null };
    const upsertedId = upsertInsert(unit, t, filter, (id) => {
      const doc: JsonObject = { _id: id, ...seedFromFilter(filter) };
      applyUpdate(doc, update, true);
      return doc;
    });
    return { matchedCount: 0, modifiedCount: 0, upsertedId };
  }

  function deleteWhere(unit: Unit, t: Table, filter: JsonObject, limit: number): number {
    const ids = matchingIds(unit, t, filter, limit);
    for (const id of ids) {
      const entry = load(unit, t, id);
      unit.touch(entry);
      entry.doc = null;
      entry.dirty = true;
    }
    return ids.length;
  }

  /**
   * A deferred unit (call with the mutex held): it joins the held unit, whose documents stay
   * parsed in memory from batch to batch and are written once, when it commits. A rebuild's
   * batches change the same documents again and again (a person's counters, a group's scores, a
   * Castie's view): committed batch by batch, each was read, parsed, written and its pages
   * committed once per batch. Measured in one thread on the seeded history (bench first-start
   * has the whole start): people, friendships and groups from 1.04M events 28.4 -> 20.2 s; the
   * Casties' own read models from 570k events 31.7 -> 28.9 s; with 300,000 documents held, 18.8
   * and 26.8 s, for 370 MB more memory.
   */
  async function runDeferred<R>(fn: (unit: UnitOfWork) => Promise<R>): Promise<R> {
    if (lost) throw lost;
    let unit = held;
    if (!unit) {
      writer.db.exec('BEGIN IMMEDIATE');
      unit = held = new Unit(open, openSavepoint);
    }
    const scope: Scope = { unit, ended: false, collections: new Map() };
    let result: R;
    try {
      result = await fn(unitOfWork(scope));
      // A statement inside may have failed so that SQLite rolled everything back by itself.
      if (!open()) throw new Error('SQLite rolled the deferred units back (disk full or I/O error)');
    } catch (error) {
      throw lose(unit, error);
    } finally {
      scope.ended = true;
    }
    if (unit.size > deferredDocuments) await commitHeld();
    return result;
  }

  return {
    collection,

    // With one connection, reads outside a unit go to the writer, and see a unit's writes before it commits.
    // A commit of another connection (the projections thread's) moves the version at once, before
    // that thread says what it changed: an answer made meanwhile may mix documents this store
    // cached with rows read after that commit, and must not be kept as of the version before it.
    committedVersion() {
      if (oneConnection) return null;
      const seen = writer.prepare('PRAGMA data_version').pluck().get() as number;
      if (seen !== dataVersion) {
        dataVersion = seen;
        version += 1;
      }
      return version;
    },

    allChangedElsewhere() {
      cache.clear();
      for (const name of [...generations.keys()]) newGeneration(name);
      version += 1;
    },

    changedElsewhere(name, ids) {
      if (ids === null) {
        // Dropped, maybe: set up again (on what the file holds then) when next used.
        tables.delete(name);
        cache.forgetTable(name);
      } else cache.forget(name, ids);
      newGeneration(name);
    },

    async transaction<R>(fn: (unit: UnitOfWork) => Promise<R>, options: { defer?: boolean } = {}): Promise<R> {
      const release = await mutex.lock();
      try {
        if (options.defer) return await runDeferred(fn);
        return await ownUnit(async (unit) => {
          const scope: Scope = { unit, ended: false, collections: new Map() };
          try {
            return await fn(unitOfWork(scope));
          } finally {
            scope.ended = true;
          }
        });
      } finally {
        release();
      }
    },

    async drop(names) {
      const release = await mutex.lock();
      try {
        await commitHeld();
        for (const name of names) {
          if (!NAME.test(name)) throw new Error(`invalid collection name "${name}"`);
          const side = writer.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?`).all(`${name}$%`) as { name: string }[];
          for (const { name: sideName } of side) writer.db.exec(`DROP TABLE IF EXISTS ${quoteIdent(sideName)}`);
          writer.db.exec(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
          writer.db.prepare(`DELETE FROM ${UNFILLED_SIDES} WHERE name = ?`).run(name);
          tables.delete(name);
          tableChanged(name);
        }
        writer.forget();
        reader.forget();
      } finally {
        release();
      }
    },

    async beginBulkLoad(names) {
      for (const name of names) {
        deferred.add(name);
        const t = tables.get(name);
        // Read again once it is bulk-loaded: empty then, its rows are known (see Table.storedIds).
        if (t) t.storedIds = undefined;
      }
      if (deferred.size > 0) {
        writer.cacheSize(options.bulkCacheMiB ?? 256);
        writer.mapSize(0);
        await pauseCheckpoints();
        writer.checkpointEvery(BULK_CHECKPOINT_BYTES);
      }
    },

    async endBulkLoad() {
      const release = await mutex.lock();
      try {
        await commitHeld();
        for (const name of deferred) {
          const t = tables.get(name);
          t?.buildIndexes();
          // Serving: the filter would grow with every insert, for reads that are rarely of new ids.
          if (t) t.storedIds = null;
        }
        deferred.clear();
        writer.cacheSize(servingCache);
        writer.mapSize(mapMiB);
        serveCheckpoints();
      } finally {
        release();
      }
    },

    path: options.path,

    async copyFrom(source, what) {
      if (memory || source.path === ':memory:') throw new Error('only stores in files can copy from each other');
      const release = await mutex.lock();
      try {
        await commitHeld();
        for (const spec of what.collections) if (tables.get(spec.name)) throw new Error(`copy ${spec.name} into an empty store: drop it first`);
        writer.db.prepare('ATTACH DATABASE ? AS source').run(source.path);
      } catch (error) {
        release();
        throw error;
      }
      // Rows first, then each secondary index in one pass, at once: the copy is complete, and
      // queries of the projections still rebuilding may need the indexes right away.
      for (const spec of what.collections) deferred.add(spec.name);
      let copied = 0;
      try {
        writer.db.exec('BEGIN IMMEDIATE');
        try {
          // A collection never written since it was dropped has no table there: it is empty.
          const there = (name: string) => writer.db.prepare(`SELECT 1 FROM source.sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
          for (const spec of what.collections) {
            const t = table(spec);
            tableChanged(t.name);
            if (!there(t.name)) continue;
            const columns = t.storedColumns.join(', ');
            copied += writer.db.prepare(`INSERT INTO main.${t.q} (${columns}) SELECT ${columns} FROM source.${t.q} ORDER BY rid`).run().changes;
            // The source's side tables are complete (it is finished): copied in their key order, their index on ids made once after.
            t.copySidesFrom('source');
            t.storedIds = null;
          }
          for (const { spec, filter } of what.matching ?? []) {
            const t = table(spec);
            tableChanged(t.name);
            if (!there(t.name)) continue;
            if (t.sides.size > 0) throw new Error(`copying some documents of ${t.name} (it has array indexes) is not supported`);
            const params: unknown[] = [];
            const where = compileFilter(t, filter as JsonObject, params);
            const columns = t.storedColumns.join(', ');
            copied += writer.db.prepare(`INSERT OR REPLACE INTO main.${t.q} (${columns}) SELECT ${columns} FROM source.${t.q} WHERE ${where}`).run(...params).changes;
            // Rows that did not go through Table.insert: its ids are no longer known (see Table.storedIds).
            t.storedIds = null;
          }
          writer.db.exec('COMMIT');
          transactionEnded(false);
        } catch (error) {
          rollback();
          throw error;
        }
      } finally {
        writer.db.exec('DETACH DATABASE source');
        for (const spec of what.collections) deferred.delete(spec.name);
        try {
          for (const spec of what.collections) tables.get(spec.name)?.buildIndexes();
        } finally {
          release();
        }
      }
      return copied;
    },

    explain(spec, filter, options = {}) {
      const t = table(spec as unknown as CollectionSpec<Doc>);
      const { sql, params } = select(reader, t, filter as JsonObject, options);
      return (reader.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
    },

    async close() {
      if (closed) return;
      const release = await mutex.lock();
      closed = true;
      // A loss latched before was already reported to whoever deferred the units.
      const reported = lost;
      let failed: unknown = null;
      try {
        try {
          await commitHeld();
        } catch (error) {
          if (error !== reported) failed = error;
        }
        // The checkpoint thread lets the file go first, so the writer is its last connection and
        // moves what the WAL holds into the file as it closes.
        await pauseCheckpoints();
        if (!memory) writer.db.pragma('optimize');
        if (reader !== writer) reader.db.close();
        writer.db.close();
      } finally {
        release();
      }
      if (failed) throw failed;
    },
  };
}

/**
 * When a find sorts and limits over `field: {$in: [...]}` and an index has that field first and
 * the sort keys next (in the same or the exactly reversed directions), the query can merge one
 * index range per value instead of sorting every match: what MongoDB's planner does too.
 */
function mergePlan(t: Table, filter: JsonObject, sort: Record<string, 1 | -1> | undefined, limit: number) {
  if (!sort || limit <= 0) return null;
  const sortKeys = Object.entries(sort) as [string, 1 | -1][];
  for (const [field, condition] of Object.entries(filter)) {
    if (field.startsWith('$') || !t.columns.has(field)) continue;
    if (!condition || typeof condition !== 'object' || Array.isArray(condition)) continue;
    const keys = Object.keys(condition);
    if (keys.length !== 1 || keys[0] !== '$in') continue;
    const values = [...new Set((condition as { $in: unknown[] }).$in)];
    if (values.length < 2 || values.length > MERGE_MAX || values.some((v) => v === null || typeof v === 'object')) continue;
    const served = t.indexes.some((index) => {
      if (index.length !== sortKeys.length + 1 || index[0]![0] !== field) return false;
      const flip = index[1]![1] === sortKeys[0]![1] ? 1 : -1;
      return sortKeys.every(([path, dir], i) => index[i + 1]![0] === path && index[i + 1]![1] * flip === dir);
    });
    if (!served) continue;
    const rest = { ...filter };
    delete rest[field];
    return { field, values, rest, sortKeys };
  }
  return null;
}

/** The equality conditions on indexed array fields that every match must meet (top level and $and): [side table, value]. */
function multikeyValues(t: Table, filter: JsonObject): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and') for (const sub of condition as JsonObject[]) out.push(...multikeyValues(t, sub));
    const side = t.multikey.get(key);
    if (!side) continue;
    if (typeof condition === 'string' || typeof condition === 'number') out.push([side, condition]);
    else if (isOperatorObject(condition) && (typeof condition.$eq === 'string' || typeof condition.$eq === 'number')) out.push([side, condition.$eq]);
  }
  return out;
}
