import { DuplicateKeyError, type Collection, type Doc, type Filter, type Update } from '../ports/document-store.ts';
import type { LogPosition } from '../ports/event-log.ts';

/**
 * Applies `update` to one read-model document unless that document has already applied this log
 * record. The document remembers the last offset it applied per topic partition (records of one
 * partition arrive in order), so redelivering an event after a crash changes nothing, even for
 * counters ($inc). A replayed dead letter (`record.replayed`) comes after later records of its
 * partition: that offset would say it was applied, so the document remembers each replayed record
 * by itself instead (`_replayed`, one entry per dead letter replayed onto it), and the last offset
 * stays where it was (moved back, records after the letter would apply twice on redelivery).
 * With `upsert`, a document that does not exist yet is created. Inside an atomic unit of work
 * (SQLite: the batch commits with its checkpoint, a replay with its dead letter's status) an event
 * cannot be applied twice, so the marks are left out there. Says what it did: `inserted` the
 * document, `updated` it, or null (nothing: it applied this record already, or does not exist and
 * `upsert` is false).
 */
export async function updateOnce<T extends Doc>(collection: Collection<T>, id: string, record: LogPosition & { replayed?: true }, update: Update<T>, options: { upsert?: boolean } = {}): Promise<'inserted' | 'updated' | null> {
  const done = (res: { matchedCount: number; upsertedId: unknown }) => (res.upsertedId !== null ? 'inserted' : res.matchedCount > 0 ? 'updated' : null);
  if (collection.inAtomicUnit()) {
    const byId: Filter<Doc> = { _id: id };
    return done(await collection.updateOne(byId as unknown as Filter<T>, update, { upsert: options.upsert ?? true }));
  }
  const partition = `${record.topic.replaceAll('.', '_')}-${record.partition}`;
  // A replayed letter's own mark: the replay applied it (or a delivery of it after the replay must not).
  const letter = `${partition}-${record.offset}`;
  const replayed = `_replayed.${letter}` as const;
  const unreplayed: Filter<Doc> = { [replayed]: { $exists: false } };
  let unapplied: Filter<Doc>;
  let mark: `_applied.${string}` | `_replayed.${string}`;
  if (record.replayed) {
    unapplied = { _id: id, ...unreplayed };
    mark = replayed;
  } else {
    const applied = `_applied.${partition}` as const;
    unapplied = { _id: id, ...unreplayed, $or: [{ [applied]: { $exists: false } }, { [applied]: { $lt: record.offset } }] };
    mark = applied;
  }
  // Every document type has `_applied` and `_replayed` (Doc): the generic T just cannot show it to the compiler.
  const filter = unapplied as unknown as Filter<T>;
  const guarded: Update<T> = { ...update, $set: { ...update.$set, [mark]: record.offset } };
  try {
    return done(await collection.updateOne(filter, guarded, { upsert: options.upsert ?? true }));
  } catch (error) {
    // The document exists and has applied this record already: the upsert found no match.
    if (error instanceof DuplicateKeyError) return null;
    throw error;
  }
}
