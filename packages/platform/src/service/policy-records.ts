import { EventEnvelopeSchema, type EventCatalog, type EventOf } from '@castie/contracts';
import type { ZodType } from 'zod';
import type { LogRecord } from '../ports/event-log.ts';

/**
 * How many records a policy's subscription takes at a time (`maxBatch`). A policy's first pass
 * over a long history (a new policy, a first start) reads the whole topic, and on the embedded
 * log a batch's records stay alive until the batch is handled: 500 of them (the log's default)
 * outlived two minor GCs and were promoted. The late-forecasts policy's pass over the seeded
 * history, its checks already in SQL, grew V8's old space to 290 MB and the process to 389 MB of
 * anonymous memory 5 s into the pass; at 100, to 85 MB and 182 MB, at the same CPU. (Kafka hands
 * over a whole fetch at once: there the batch only bounds what one call handles.) Live, batches
 * are a few records anyway.
 */
export const POLICY_BATCH = 100;

/**
 * A record's event, as a policy reads it: by the catalog of its topic; null when it is none of
 * its events (not JSON, no envelope, an unknown type, data that breaks the contract). The
 * projections dead-letter such a record; a policy, which has no dead letters, skips it: a policy
 * that failed on it would get it again forever and stop acting on everything after it.
 */
export function policyEventOf<M extends Record<string, ZodType>>(catalog: EventCatalog<M>, record: LogRecord): EventOf<M> | null {
  let value: unknown;
  try {
    value = JSON.parse(record.value);
  } catch {
    return null;
  }
  const envelope = EventEnvelopeSchema.safeParse(value);
  if (!envelope.success || !catalog.has(envelope.data.type)) return null;
  try {
    return catalog.parse(envelope.data);
  } catch {
    return null;
  }
}
