import type { z } from 'zod';
import type { EventEnvelope } from './envelope.ts';

type Schemas = Record<string, z.ZodType>;

/** The union of `{ type, data }` events a catalog describes. */
export type EventOf<M extends Schemas> = { [K in keyof M & string]: { type: K; data: z.infer<M[K]> } }[keyof M & string];

/** Converts event data from version N (the key) to version N + 1. */
export type Upcasters = Record<string, Record<number, (data: unknown) => unknown>>;

export class InvalidEventError extends Error {
  constructor(
    readonly eventType: string,
    readonly reason: string,
  ) {
    super(`invalid event ${eventType}: ${reason}`);
    this.name = 'InvalidEventError';
  }
}

/**
 * The contract of one topic: the current schema of every event type it carries and the upcasters
 * that bring old versions up to date. Publishers validate with `check`, consumers with `parse`.
 */
export interface EventCatalog<M extends Schemas> {
  readonly topic: string;
  readonly schemas: M;
  /** Current schema version of a type. */
  versionOf(type: keyof M & string): number;
  /** Validates an event before it is published; throws InvalidEventError. */
  check<E extends EventOf<M>>(event: E): E;
  /** Upcasts and validates an envelope read from the log; throws InvalidEventError. */
  parse(envelope: EventEnvelope): EventOf<M>;
  /** True when the catalog knows this type. */
  has(type: string): boolean;
}

export function defineEventCatalog<M extends Schemas>(topic: string, schemas: M, upcasters: Upcasters = {}): EventCatalog<M> {
  const versionOf = (type: string): number => 1 + Object.keys(upcasters[type] ?? {}).length;
  const validate = (type: string, data: unknown): unknown => {
    const schema = schemas[type];
    if (!schema) throw new InvalidEventError(type, `unknown event type on topic ${topic}`);
    const result = schema.safeParse(data);
    if (!result.success) throw new InvalidEventError(type, result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    return result.data;
  };
  return {
    topic,
    schemas,
    versionOf,
    has: (type) => Object.hasOwn(schemas, type),
    check(event) {
      validate(event.type, event.data);
      return event;
    },
    parse(envelope) {
      let data = envelope.data;
      const current = versionOf(envelope.type);
      if (envelope.schemaVersion > current) throw new InvalidEventError(envelope.type, `schema version ${envelope.schemaVersion} is newer than ${current}`);
      for (let v = envelope.schemaVersion; v < current; v++) {
        const up = upcasters[envelope.type]?.[v];
        if (!up) throw new InvalidEventError(envelope.type, `no upcaster from version ${v}`);
        data = up(data);
      }
      return { type: envelope.type, data: validate(envelope.type, data) } as EventOf<M>;
    },
  };
}
