import { z } from 'zod';

/*
 * The operations endpoints every process answers (/healthz, /readyz; /metrics is Prometheus
 * text). They are read by probes and operators, not by the mobile clients, and sit outside /api/.
 */

/** GET /healthz: the process is alive. Nothing behind it is asked. */
export const HealthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export type Health = z.infer<typeof HealthSchema>;

/** How far one projection of a service is behind the end of the log it reads. */
export const ReadModelLagSchema = z.object({
  service: z.string(),
  /** The projection runner's consumer group, e.g. `groups-read`. */
  group: z.string(),
  projection: z.string(),
  /** Records in the log (over every partition of the projection's topics) not applied yet. */
  lagEvents: z.number().int().nonnegative(),
});
export type ReadModelLag = z.infer<typeof ReadModelLagSchema>;

/** A dependency the process cannot serve without (e.g. the gateway's cache), probed with a time bound. */
export const ReadinessCheckSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  /** Why it failed (a short message; never a stack). */
  error: z.string().optional(),
});
export type ReadinessCheck = z.infer<typeof ReadinessCheckSchema>;

/**
 * GET /readyz: 200 with `ready` when every read model of the process is at most `maxLagEvents`
 * behind the log and every check passed; 503 with `not_ready` and the same body otherwise.
 */
export const ReadinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  maxLagEvents: z.number().int().nonnegative(),
  readModels: z.array(ReadModelLagSchema),
  checks: z.array(ReadinessCheckSchema),
}).meta({ id: 'Readiness' });
export type Readiness = z.infer<typeof ReadinessSchema>;
