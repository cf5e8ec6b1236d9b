import { z } from 'zod';

/**
 * Every event, whoever publishes it, travels in this envelope. `type` + `schemaVersion` select the
 * data schema; old versions are upcast on the way in, history is never edited.
 */
export const EventEnvelopeSchema = z.object({
  /** Unique id of this event (32 hex characters). */
  id: z.string().min(1),
  type: z.string().min(1),
  schemaVersion: z.number().int().positive(),
  /** Aggregate stream the event belongs to, e.g. `account-<userId>`; also the log key. */
  streamId: z.string().min(1),
  /** Version of the stream after this event, from 1. */
  streamVersion: z.number().int().positive(),
  /** ISO-8601 instant at which the command that caused it was decided. */
  occurredAt: z.string().datetime(),
  /** User id of who caused it, or `system` / `admin`. */
  actor: z.string().min(1),
  data: z.unknown(),
});
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;

/** The fields of an envelope that say what a record is and where it belongs: the head of its JSON. */
export type EnvelopeHead = Pick<EventEnvelope, 'id' | 'type' | 'schemaVersion' | 'streamId' | 'streamVersion'>;

/**
 * The head of an envelope as the event stores write it: the JSON of a parsed envelope, whose
 * keys come in the schema's order, and whose ids and type are strings without escapes or control
 * characters. Each value ends at its closing quote or at the comma after its digits, so what
 * matches is exactly those JSON tokens, checked as the schema checks them (non-empty strings,
 * positive integers).
 */
// eslint-disable-next-line no-control-regex -- JSON refuses them inside strings, and so must the head.
const ENVELOPE_HEAD = /^\{"id":"([^"\\\u0000-\u001f]+)","type":"([^"\\\u0000-\u001f]+)","schemaVersion":([1-9]\d{0,14}),"streamId":"([^"\\\u0000-\u001f]+)","streamVersion":([1-9]\d{0,14}),/;

/**
 * Reads the head of an envelope from its JSON without parsing the rest: a reader that needs only
 * where an event belongs (a stream index) skips its JSON and contract, which were most of the
 * time it took to index a log. null when the text does not begin with such a head (keys in
 * another order, escapes, spaces): parse that whole (EventEnvelopeSchema), which also tells what
 * is wrong with it. The rest is not read: text that is not JSON after the head, or that names a
 * key of the head again, goes unnoticed here. The event stores write what JSON.stringify gives
 * (no key twice), in frames the log checks, and reading a stream parses its events whole.
 */
export function peekEnvelope(json: string): EnvelopeHead | null {
  const m = ENVELOPE_HEAD.exec(json);
  if (!m) return null;
  return { id: m[1]!, type: m[2]!, schemaVersion: Number(m[3]), streamId: m[4]!, streamVersion: Number(m[5]) };
}

/** An event as a decider returns it: just the type and its data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/**
 * A registry of one topic's events: type -> schema per version, newest last, with upcasters
 * from each older version to the next. `parse` validates and upcasts an incoming envelope.
 */
export interface EventDefinition<S extends z.ZodType = z.ZodType> {
  type: string;
  version: number;
  schema: S;
  /** Converts data of the previous version into this version's shape. */
  upcastFrom?: (previous: unknown) => unknown;
}
