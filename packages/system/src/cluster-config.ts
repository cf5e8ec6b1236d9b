import { serviceNames, type ServiceName } from '@castie/contracts';
import { z } from 'zod';
import { corsOriginsSchema, liveConfigShape } from './config.ts';
import { ConfigurationError, problemsOf, shutdownGraceMs, timeZoneName } from './lifecycle.ts';

/** What one cluster process runs: one service, or the gateway. */
export type ClusterRole = ServiceName | 'gateway';
export const clusterRoles: readonly ClusterRole[] = [...serviceNames, 'gateway'];

const list = z
  .string()
  .optional()
  .transform((s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []));
const optionalUrl = z.string().url().optional();

/** The environment variable holding a service's base URL, for the gateway: `IDENTITY_URL`, `CASTIES_URL`… */
export const serviceUrlVariable = (name: ServiceName): string => `${name.toUpperCase()}_URL`;

/**
 * Configuration of the cluster profile, from environment variables only (12-factor), checked once
 * at boot. Unlike the embedded profile nothing secret is generated: every process of the cluster
 * must agree on SECRET and ADMIN_TOKEN, so both are required.
 */
export const ClusterEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  /** Comma-separated `host:port` list; needed by the services. */
  KAFKA_BROKERS: list,
  /** Defaults to `castie-<role>`. */
  KAFKA_CLIENT_ID: z.string().optional(),
  /** Partitions of topics created on first use. */
  KAFKA_PARTITIONS: z.coerce.number().int().min(1).default(3),
  /** Replication factor of created topics; default: the brokers' default. */
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).optional(),
  MONGO_URL: z.string().min(1),
  /** Databases are `<prefix><service>` (events), `<prefix><service>_read` (read models), `<prefix>media`. */
  MONGO_DB_PREFIX: z.string().regex(/^[A-Za-z0-9_-]*$/).default('castie_'),
  REDIS_URL: z.string().min(1),
  /** Needed by the identity service (password-reset mails), e.g. `smtp://mailpit:1025`. */
  SMTP_URL: z.string().optional(),
  /** Sender of mails; default `Castie <no-reply@<PUBLIC_URL host>>`. */
  MAIL_FROM: z.string().optional(),
  SECRET: z.string().min(16),
  ADMIN_TOKEN: z.string().min(16),
  API_KEYS: list,
  /** Where people reach the gateway (the ingress), for links in e-mails. */
  PUBLIC_URL: z.string().url(),
  TZ_NAME: timeZoneName,
  /** How long a stop may take before the process exits anyway (milliseconds). */
  SHUTDOWN_GRACE_MS: shutdownGraceMs,
  /** Each process has its own clock, so only `system` makes sense in a cluster. */
  CLOCK: z.literal('system', { error: 'CLOCK=manual is only supported by the embedded profile (every cluster process has its own clock)' }).default('system'),
  /** Proxies whose X-Forwarded-For the gateway believes (comma-separated addresses or CIDRs); unset: none. */
  TRUST_PROXY: z.string().regex(/^[0-9A-Fa-f.:/,\s]+$/, 'must list proxy addresses or CIDRs, comma-separated').optional(),
  /** Origins of browser clients allowed to call the gateway, comma-separated; unset: none. */
  CORS_ORIGINS: corsOriginsSchema,
  /** Requests a signed-in user may make per minute (abuse limit). */
  USER_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** /readyz answers 503 while a read model is more than this many records behind the log. */
  READY_MAX_LAG_EVENTS: z.coerce.number().int().min(0).default(1000),
  ...liveConfigShape,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  IDENTITY_URL: optionalUrl,
  GROUPS_URL: optionalUrl,
  CASTIES_URL: optionalUrl,
  SOCIAL_URL: optionalUrl,
  NOTIFICATIONS_URL: optionalUrl,
});

export type ClusterEnv = z.infer<typeof ClusterEnvSchema>;

export interface ClusterConfig extends ClusterEnv {
  role: ClusterRole;
  kafkaClientId: string;
  mailFrom: string;
  /** The gateway's service base URLs. */
  serviceUrls: Partial<Record<ServiceName, string>>;
}

/**
 * Reads and checks the configuration of one cluster process. `services` are the services the
 * system has (the gateway needs a URL for each of them); a missing or invalid variable fails the
 * start with every problem named.
 */
export function readClusterConfig(role: string | undefined, env: Record<string, string | undefined>, services: readonly ServiceName[]): ClusterConfig {
  if (!role || !(clusterRoles as readonly string[]).includes(role)) {
    throw new ConfigurationError(`usage: cluster.js <${clusterRoles.join('|')}> (got ${role ?? 'nothing'})`);
  }
  const clusterRole = role as ClusterRole;
  const parsed = ClusterEnvSchema.safeParse(env);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  const c = parsed.success ? parsed.data : null;
  const serviceUrls: Partial<Record<ServiceName, string>> = {};
  if (c) {
    if (clusterRole !== 'gateway' && c.KAFKA_BROKERS.length === 0) problems.push('KAFKA_BROKERS: required by the services');
    if (clusterRole === 'identity' && !c.SMTP_URL) problems.push('SMTP_URL: required by the identity service (password-reset mails)');
    if (clusterRole === 'gateway') {
      for (const name of services) {
        const url = c[serviceUrlVariable(name) as keyof ClusterEnv];
        if (typeof url === 'string') serviceUrls[name] = url;
        else problems.push(`${serviceUrlVariable(name)}: required by the gateway (base URL of the ${name} service)`);
      }
    }
  }
  if (!c || problems.length > 0) throw new ConfigurationError(`invalid configuration: ${problems.join('; ')}`);
  return {
    ...c,
    role: clusterRole,
    kafkaClientId: c.KAFKA_CLIENT_ID ?? `castie-${clusterRole}`,
    mailFrom: c.MAIL_FROM ?? `Castie <no-reply@${new URL(c.PUBLIC_URL).hostname}>`,
    serviceUrls,
  };
}
