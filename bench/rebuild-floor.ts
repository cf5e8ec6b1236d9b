// What a first start could not go below with today's storage, on the seeded history, beside what
// it takes (npm run bench -- first-start):
// - writing: every finished read-model file written once more, in the same layout, by SQLite
//   alone: each table copied into a new file in its stored order, then its indexes built, as a
//   rebuild thread builds them (a private file: journal in memory, no syncs). No JavaScript per
//   row, no JSON made. On two threads, notifications' and social's files start as copies of
//   groups' whole file (rebuild-worker.ts, startAsCopyOf): the tables they share with it are
//   written by SQLite only once, in groups' file, and the floor counts them there only (casties,
//   built beside groups, copies them table by table: counted).
// - decoding: every event of the log read and decoded once, JSON and contract, as the
//   projections decode it (service/projections.ts). A first start decodes most events more than
//   once: each thread decodes the topics it reads.
// What a first start spends beyond their sum (its CPU time) goes to applying events through the
// projections and the document store, to the event stores' stream indexes, and to collecting
// garbage. The read models come from the seeded history's first start, kept beside it (built
// once, minutes).
//
// npm run bench -- rebuild-floor [--data <seeded dir>] [--users 10000 --groups 200 --casties 20000 --forecasts 500000 --friends 30]
import { castieEvents, EventEnvelopeSchema, groupEvents, identityEvents, loginEvents, notificationEvents, socialEvents } from '../packages/contracts/src/index.ts';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readyCopy, sizesFrom } from './support/data-set.ts';
import { benchArgs } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** What is used here of better-sqlite3, the platform's (the root package depends on no SQLite). */
interface Sqlite {
  pragma(source: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): { run(...params: unknown[]): { changes: number }; all(...params: unknown[]): unknown[] };
  close(): void;
}
const Database = createRequire(join(here, 'packages/platform/package.json'))('better-sqlite3') as new (path: string) => Sqlite;
const { flag } = benchArgs();
const say = (line: string) => process.stderr.write(`rebuild-floor: ${line}\n`);
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const ready = await readyCopy(here, sizesFrom(flag), say);
const scratch = mkdtempSync(join(tmpdir(), 'castie-floor-'));
try {
  // Writing: each service's file again, by SQLite alone.
  let writing = 0;
  let rows = 0;
  /** What SQLite writes of the tables a file shares with groups' (a copy of whose file it may start as). */
  let shared = 0;
  const files = readdirSync(join(ready, 'read-models')).filter((f) => f.endsWith('.db'));
  const tablesOf = (file: string): Set<string> => {
    const db = new Database(join(ready, 'read-models', file));
    try {
      return new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name));
    } finally {
      db.close();
    }
  };
  const groupsTables = files.includes('groups.db') ? tablesOf('groups.db') : new Set<string>();
  // On two threads (parallel.ts): groups and casties build side by side, so casties copies the
  // shared tables from groups' file through SQLite; notifications (after groups, on its thread)
  // and social (last) start as a copy of groups' whole file.
  const STARTS_AS_COPY_OF_GROUPS = new Set(['notifications.db', 'social.db']);
  for (const file of files) {
    const db = new Database(join(scratch, file));
    try {
      // As a rebuild thread's private file (sqlite-document-store.ts, Connection).
      db.pragma('page_size = 4096');
      db.pragma('journal_mode = MEMORY');
      db.pragma('synchronous = OFF');
      db.pragma('temp_store = MEMORY');
      db.pragma(`cache_size = -${256 * 1024}`);
      db.prepare('ATTACH DATABASE ? AS source').run(join(ready, 'read-models', file));
      const schema = db.prepare("SELECT type, name, tbl_name, sql FROM source.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'").all() as { type: string; name: string; tbl_name: string; sql: string }[];
      const copyOfGroups = (table: string) => STARTS_AS_COPY_OF_GROUPS.has(file) && groupsTables.has(table);
      let copied = 0;
      let ownSeconds = 0;
      let sharedSeconds = 0;
      // The tables it shares with groups' file first, then its own: each part's CPU on its own.
      for (const part of [true, false]) {
        const since = process.cpuUsage();
        db.exec('BEGIN');
        for (const table of schema.filter((s) => s.type === 'table' && copyOfGroups(s.name) === part)) {
          db.exec(table.sql);
          const n = db.prepare(`INSERT INTO main."${table.name}" SELECT * FROM source."${table.name}"`).run().changes;
          if (!part) copied += n;
        }
        db.exec('COMMIT');
        for (const index of schema.filter((s) => s.type === 'index' && copyOfGroups(s.tbl_name) === part)) db.exec(index.sql);
        if (part) sharedSeconds = cpuSeconds(since);
        else ownSeconds = cpuSeconds(since);
      }
      say(`writing ${file}: ${fmt(copied)} rows of its own with their indexes, ${ownSeconds.toFixed(1)} s of CPU${sharedSeconds > 0.05 ? ` (and ${sharedSeconds.toFixed(1)} s for the tables it shares with groups' file)` : ''}`);
      writing += ownSeconds;
      shared += sharedSeconds;
      rows += copied;
    } finally {
      db.close();
    }
  }

  // Decoding: every event once.
  const catalogs = [identityEvents, loginEvents, groupEvents, castieEvents, socialEvents, notificationEvents];
  const log = await createFileEventLog({ dir: join(ready, 'log'), readOnly: true });
  let decoding = 0;
  let events = 0;
  try {
    for (const catalog of catalogs) {
      const end = (await log.endOffsets(catalog.topic)).get(0) ?? 0;
      let spent = 0;
      for (let next = 0; next < end; ) {
        const records = await log.read(catalog.topic, next, 10_000);
        if (records.length === 0) break;
        const since = process.cpuUsage();
        for (const record of records) catalog.parse(EventEnvelopeSchema.parse(JSON.parse(record.value)));
        spent += cpuSeconds(since);
        next = records[records.length - 1]!.offset + 1;
      }
      if (end > 0) say(`decoding ${catalog.topic}: ${fmt(end)} events, ${spent.toFixed(1)} s of CPU (${((spent / end) * 1e6).toFixed(1)} µs each)`);
      decoding += spent;
      events += end;
    }
  } finally {
    await log.close();
  }

  const cores = availableParallelism();
  const floor = writing + decoding;
  say(`floor: ${fmt(rows)} rows written (${writing.toFixed(1)} s) + ${fmt(events)} events decoded once (${decoding.toFixed(1)} s) = ${floor.toFixed(1)} s of CPU`);
  say(`  (the tables other files share with groups' file come with a copy of it; written by SQLite in each file instead, ${shared.toFixed(1)} s more)`);
  say(`on ${cores} cores, perfectly shared: ${(floor / cores).toFixed(1)} s, ${fmt(events / (floor / cores))} events/s at most with these files, before any projection runs`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(ready, { recursive: true, force: true });
}
