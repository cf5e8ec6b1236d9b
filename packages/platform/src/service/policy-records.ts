import { EventEnvelopeSchema, type EventCatalog, type EventOf } from '@castie/contracts';
import type { ZodType } from 'zod';
import type { LogRecord } from '../ports/event-log.ts';

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
