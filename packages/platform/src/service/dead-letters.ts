import type { DeadLetter } from '@castie/contracts';
import { collectionSpec, type Collections, type Doc } from '../ports/document-store.ts';
import type { LogRecord } from '../ports/event-log.ts';

/**
 * A record the projections of a consumer group could not apply, kept beside the read models so
 * operators can list it and, once its cause is fixed, replay it. The `<group>.dead-letter` topic
 * stays the durable trace; this collection is its index with a status. It is written in the same
 * unit of work as the batch that failed, survives rebuilds (no projection owns it) and is keyed
 * by the event's position, so a redelivered batch records one dead letter, not two.
 */
export interface DeadLetterDoc extends Doc {
  group: string;
  topic: string;
  partition: number;
  offset: number;
  key: string;
  value: string;
  timestamp: number;
  eventType: string;
  /** Comma-separated names of the projections that failed; '' when the event broke its contract. */
  projections: string;
  reason: string;
  deadLetteredAt: string;
  status: 'pending' | 'replayed';
  replayedAt: string | null;
}

export const DEAD_LETTERS = collectionSpec<DeadLetterDoc>({ name: 'dead_letters', indexes: [{ keys: { status: 1, deadLetteredAt: 1 } }, { keys: { deadLetteredAt: 1 } }] });

export const deadLetterId = (p: { topic: string; partition: number; offset: number }): string => `${p.topic}:${p.partition}:${p.offset}`;

/** The event type of a record, if its JSON says one ('' when unreadable). */
function eventTypeOf(value: string): string {
  try {
    const type = (JSON.parse(value) as { type?: unknown }).type;
    return typeof type === 'string' ? type : '';
  } catch {
    return '';
  }
}

/** Records a dead letter (inside the failing batch's unit of work); a second failing projection joins the first. */
export async function recordDeadLetter(store: Collections, group: string, record: LogRecord, failed: { projection: string | null; reason: string }, now: Date): Promise<void> {
  const letters = store.collection(DEAD_LETTERS);
  const _id = deadLetterId(record);
  const existing = await letters.findOne({ _id });
  const names = new Set(existing?.status === 'pending' && existing.projections ? existing.projections.split(',') : []);
  if (failed.projection) names.add(failed.projection);
  const reason = existing?.status === 'pending' && existing.reason !== failed.reason ? `${existing.reason}; ${failed.reason}` : failed.reason;
  await letters.replaceOne(
    { _id },
    {
      _id,
      group,
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      key: record.key,
      value: record.value,
      timestamp: record.timestamp,
      eventType: eventTypeOf(record.value),
      projections: failed.projection === null ? '' : [...names].join(','),
      reason,
      deadLetteredAt: now.toISOString(),
      status: 'pending',
      replayedAt: null,
    },
    { upsert: true },
  );
}

/** The dead letter as the admin API shows it. */
export const deadLetterView = (doc: DeadLetterDoc): DeadLetter => ({
  id: doc._id,
  group: doc.group,
  topic: doc.topic,
  partition: doc.partition,
  offset: doc.offset,
  eventType: doc.eventType,
  projections: doc.projections ? doc.projections.split(',') : [],
  reason: doc.reason,
  deadLetteredAt: doc.deadLetteredAt,
  status: doc.status,
  replayedAt: doc.replayedAt,
});

/** Dead letters of a group, oldest first: pending ones, or all. */
export async function listDeadLetters(store: Collections, options: { all: boolean }): Promise<DeadLetter[]> {
  const letters = store.collection(DEAD_LETTERS);
  const docs = await letters.find(options.all ? {} : { status: 'pending' }, { sort: { deadLetteredAt: 1 } });
  return docs.map(deadLetterView);
}

/**
 * A rebuild applies every event again, so the pending dead letters of the projections it rebuilds
 * are settled by it: an event that fails again is recorded again (same id, pending), one that now
 * succeeds must not stay listed, or a replay would apply it twice. A letter several projections
 * failed on keeps the names of those not rebuilt; one that broke its contract (no names) is
 * settled only by a rebuild of the whole group, which reads it again.
 */
export async function forgetRebuiltDeadLetters(store: Collections, group: string, rebuilt: ReadonlySet<string>, wholeGroup: boolean): Promise<void> {
  const letters = store.collection(DEAD_LETTERS);
  for (const letter of await letters.find({ group, status: 'pending' })) {
    const names = letter.projections ? letter.projections.split(',') : [];
    const kept = names.filter((name) => !rebuilt.has(name));
    if (names.length === 0 ? wholeGroup : kept.length === 0) await letters.deleteOne({ _id: letter._id });
    else if (kept.length < names.length) await letters.updateOne({ _id: letter._id }, { $set: { projections: kept.join(',') } });
  }
}
