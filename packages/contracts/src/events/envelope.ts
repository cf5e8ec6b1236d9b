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
