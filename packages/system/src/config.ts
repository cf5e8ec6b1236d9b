import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigurationError, problemsOf, shutdownGraceMs, timeZoneName } from './lifecycle.ts';

const list = z
  .string()
  .optional()
  .transform((s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []));

/** Whether `text` is exactly a web origin: http(s), host, optional port; no path, query or trailing slash. */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    // The URL parser takes hosts browsers never send (`*.example.com`): only names and addresses.
    const host = /^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/i.test(url.hostname);
    return (url.protocol === 'https:' || url.protocol === 'http:') && host && url.origin === text;
  } catch {
    return false;
  }
}

/**
 * `CORS_ORIGINS`: the origins of browser clients allowed to call the gateway, comma-separated
 * (e.g. `https://app.example.com,http://localhost:5173`); unset or empty: no cross-origin access.
 */
export const corsOriginsSchema = list.superRefine((origins, ctx) => {
  for (const origin of origins) {
    if (!isOrigin(origin)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(origin)} is not an origin like https://app.example.com (scheme, host and optional port; no path or trailing slash)` });
  }
});

/** Limits of live notification streams (README "Live updates"), the same in both profiles. */
export const liveConfigShape = {
  /** Open notification streams one user may hold on one gateway; one more answers 429. */
  LIVE_STREAMS_PER_USER: z.coerce.number().int().positive().default(5),
  /** Open notification streams one gateway holds in all; one more answers 429. */
  LIVE_STREAMS_TOTAL: z.coerce.number().int().positive().default(10_000),
  /** Milliseconds between heartbeat comments on a stream (a client stalled that long is dropped). */
  LIVE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** Seconds a stream token opens streams for. */
  LIVE_TOKEN_SECONDS: z.coerce.number().int().min(5).max(3600).default(60),
};

/** The gateway's live limits from a parsed configuration. */
export const liveLimitsOf = (c: { LIVE_STREAMS_PER_USER: number; LIVE_STREAMS_TOTAL: number; LIVE_HEARTBEAT_MS: number; LIVE_TOKEN_SECONDS: number }) => ({
  perUser: c.LIVE_STREAMS_PER_USER,
  total: c.LIVE_STREAMS_TOTAL,
  heartbeatMs: c.LIVE_HEARTBEAT_MS,
  tokenSeconds: c.LIVE_TOKEN_SECONDS,
});

/**
 * Configuration of the embedded profile, from environment variables only (12-factor), checked
 * once at boot. Everything has a default that works on a laptop.
 */
export const EmbeddedConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  /** `manual` lets POST /admin/clock/ move time forward (tests, demos). */
  CLOCK: z.enum(['system', 'manual']).default('system'),
  /** Generated and printed at start when unset. */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** Comma-separated; when set, every /api/ request needs one in `Api-Key`. */
  API_KEYS: list,
  /** Keys the verified-credentials cache and reset tokens; generated (per run) when unset. */
  SECRET: z.string().min(16).optional(),
  PUBLIC_URL: z.string().url().optional(),
  /** Uses Redis for caches instead of process memory. */
  REDIS_URL: z.string().optional(),
  /** Proxies whose X-Forwarded-For the gateway believes (comma-separated addresses or CIDRs); unset: none. */
  TRUST_PROXY: z.string().regex(/^[0-9A-Fa-f.:/,\s]+$/, 'must list proxy addresses or CIDRs, comma-separated').optional(),
  /** Origins of browser clients allowed to call the API, comma-separated; unset: none. */
  CORS_ORIGINS: corsOriginsSchema,
  /** Requests a signed-in user may make per minute (abuse limit). */
  USER_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** /readyz answers 503 while a read model is more than this many records behind the log. */
  READY_MAX_LAG_EVENTS: z.coerce.number().int().min(0).default(1000),
  /**
   * Documents a rebuild of one service's read models keeps in memory between its commits (its
   * batches commit together): more is faster and takes more memory, about 1-2 KB per document.
   * Unset: sized from the memory the process may use (rebuild/sizing.ts).
   */
  REBUILD_HELD_DOCUMENTS: z.coerce.number().int().positive().max(10_000_000).optional(),
  ...liveConfigShape,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The service's time zone: end dates and times of Casties are read in it. */
  TZ_NAME: timeZoneName,
  /** How long a stop may take before the process exits anyway (milliseconds). */
  SHUTDOWN_GRACE_MS: shutdownGraceMs,
});

export type EmbeddedConfig = z.infer<typeof EmbeddedConfigSchema> & { dataDir: string; adminToken: string; secret: string; publicUrl: string; adminTokenGenerated: boolean };

export function readEmbeddedConfig(env: Record<string, string | undefined>): EmbeddedConfig {
  const parsed = EmbeddedConfigSchema.safeParse(env);
  if (!parsed.success) throw new ConfigurationError(`invalid configuration: ${problemsOf(parsed.error).join('; ')}`);
  const c = parsed.data;
  return {
    ...c,
    dataDir: resolve(c.DATA_DIR),
    adminToken: c.ADMIN_TOKEN ?? randomBytes(24).toString('base64url'),
    adminTokenGenerated: !c.ADMIN_TOKEN,
    secret: c.SECRET ?? randomBytes(32).toString('base64url'),
    publicUrl: c.PUBLIC_URL ?? `http://localhost:${c.PORT}`,
  };
}
