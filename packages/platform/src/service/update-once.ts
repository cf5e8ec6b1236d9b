import { DuplicateKeyError, type Collection, type Doc, type Update } from '../ports/document-store.ts';
import type { LogPosition } from '../ports/event-log.ts';

/**
 * Applies `update` to one read-model document unless that document has already applied this log
 * record. The document remembers the last offset it applied per topic partition (records of one
 * partition arrive in order), so redelivering an event after a crash changes nothing, even for
 * counters ($inc). With `upsert`, a document that does not exist yet is created.
 */
export async function updateOnce<T extends Doc>(collection: Collection<T>, id: string, record: LogPosition, update: Update, options: { upsert?: boolean } = {}): Promise<boolean> {
  const mark = `_applied.${record.topic.replaceAll('.', '_')}-${record.partition}`;
  const filter = { _id: id, $or: [{ [mark]: { $exists: false } }, { [mark]: { $lt: record.offset } }] };
  const guarded: Update = { ...update, $set: { ...update.$set, [mark]: record.offset } };
  try {
    const res = await collection.updateOne(filter, guarded, { upsert: options.upsert ?? true });
    return res.matchedCount > 0 || res.upsertedId !== null;
  } catch (error) {
    // The document exists and has applied this record already: the upsert found no match.
    if (error instanceof DuplicateKeyError) return false;
    throw error;
  }
}
