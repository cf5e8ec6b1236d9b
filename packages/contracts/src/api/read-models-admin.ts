import { z } from 'zod';
import { endpoint, ok, type ServiceName } from './endpoint.ts';

/** The services that keep read models fed from the log (identity answers from its event streams). */
export const readModelServices = ['groups', 'casties', 'social', 'notifications'] as const satisfies readonly ServiceName[];
export type ReadModelService = (typeof readModelServices)[number];
export const isReadModelService = (name: string): name is ReadModelService => (readModelServices as readonly string[]).includes(name);

/** One event a projection could not apply (or that broke its contract), as operators see it. */
export const DeadLetterSchema = z.object({
  /** `<topic>:<partition>:<offset>` of the event in the log: what `replay` takes. */
  id: z.string(),
  /** Consumer group of the service's read models, e.g. `casties-read`. */
  group: z.string(),
  topic: z.string(),
  partition: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  /** Event type, when the record could be read at all. */
  eventType: z.string(),
  /** Projections that failed on it (empty: the event broke its contract before any saw it). */
  projections: z.array(z.string()),
  reason: z.string(),
  /** When it was dead-lettered (ISO 8601, server time). */
  deadLetteredAt: z.string(),
  status: z.enum(['pending', 'replayed']),
  replayedAt: z.string().nullable(),
}).meta({ id: 'DeadLetter' });
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

export const ReadModelStateSchema = z.object({
  service: z.string(),
  group: z.string(),
  /** `rebuilding` while the read models are being rebuilt (the service answers 503 meanwhile). */
  state: z.enum(['ready', 'rebuilding']),
  projections: z.array(z.object({ name: z.string(), version: z.number().int() })),
});

/**
 * The operators' API of one service's read models (behind the gateway's /admin/ bearer token,
 * forwarded to that service with `x-castie-admin: true`): rebuild them online from the log, list
 * the events its projections could not apply, and apply one again once its cause is fixed.
 */
export const readModelsAdminApi = (service: ReadModelService) =>
  ({
    state: endpoint({
      method: 'GET',
      paths: [`/admin/read-models/${service}/`],
      service,
      access: 'none',
      response: ok(ReadModelStateSchema.shape),
    }),
    /** Answers once the rebuilt read models caught up with the log (the service answered 503 meanwhile). */
    rebuild: endpoint({
      method: 'POST',
      paths: [`/admin/read-models/${service}/rebuild/`],
      service,
      access: 'none',
      response: ok({ ...ReadModelStateSchema.shape, events: z.number().int().nonnegative(), seconds: z.number().nonnegative(), message: z.string() }),
    }),
    /** Pending dead letters, oldest first; `all=true` includes the replayed ones. */
    deadLetters: endpoint({
      method: 'GET',
      paths: [`/admin/read-models/${service}/dead-letters/`],
      service,
      access: 'none',
      query: z.object({ all: z.enum(['true', 'false']).optional() }),
      response: ok({ service: z.string(), number_dead_letters: z.number().int().nonnegative(), dead_letters: z.array(DeadLetterSchema) }),
    }),
    /** Applies the event again through the projections that failed on it; 400 (still pending) if it fails again. */
    replay: endpoint({
      method: 'POST',
      paths: [`/admin/read-models/${service}/dead-letters/:id/replay/`],
      service,
      access: 'none',
      params: z.object({ id: z.string().regex(/^[^:]+:\d+:\d+$/, 'must be <topic>:<partition>:<offset>') }),
      response: ok({ dead_letter: DeadLetterSchema, message: z.string() }),
    }),
  }) as const;
