import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type LoggerOptions } from 'pino';

/** The header that names a request across the gateway, the services and their logs. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What a request id from outside may look like: short, and nothing that could forge a log line. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is acceptable (bounded, safe characters), else null. */
export function acceptedRequestId(value: unknown): string | null {
  return typeof value === 'string' && ACCEPTED_REQUEST_ID.test(value) ? value : null;
}

/**
 * Fastify's `genReqId`: the incoming `x-request-id` when it is acceptable, else a fresh UUID. The
 * gateway adopts a client's id and passes it to the services, which adopt it in turn, so one user
 * request reads as one id in every log line of every process.
 */
export function requestIdOf(request: IncomingMessage): string {
  return acceptedRequestId(request.headers[REQUEST_ID_HEADER]) ?? randomUUID();
}

/** Placeholder written instead of a secret. */
const CENSORED = '[redacted]';
/** Placeholder written instead of an e-mail address. */
const CENSORED_EMAIL = '[email]';

/** Names of fields and query parameters whose values are secrets or addresses. */
const SENSITIVE_NAMES = ['password', 'new_password', 'password_confirm', 'old_password', 'token', 'reset_token', 'secret', 'authorization', 'api-key', 'api_key', 'apikey', 'cookie', 'set-cookie', 'email', 'username', 'x-castie-email'];

/**
 * Structured paths pino censors (headers a logged request or response may carry, credentials
 * fields), at most one level deep: each `*.*.` wildcard doubled the cost of every log line (16 →
 * 8 µs per line without them), and deeper string secrets are censored by the text pass below.
 */
const REDACT_PATHS = [
  ...['authorization', 'cookie', '"set-cookie"', '"api-key"', '"x-castie-email"'].flatMap((h) => [`req.headers.${h}`, `res.headers.${h}`, `headers.${h}`, `*.headers.${h}`]),
  ...['password', 'new_password', 'password_confirm', 'token', 'secret', 'email', 'username'].flatMap((f) => [f, `*.${f}`]),
];

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const sensitiveAlternation = SENSITIVE_NAMES.map(escapeRegExp).join('|');
/** `"password":"…"` at any depth of a JSON line (string values, escapes included). */
const SENSITIVE_JSON_FIELD = new RegExp(`"(${sensitiveAlternation})":"(?:[^"\\\\]|\\\\.)*"`, 'gi');
/** `?token=…` / `&password=…` in a URL, wherever it is written. */
const SENSITIVE_QUERY_VALUE = new RegExp(`([?&](?:${sensitiveAlternation})=)[^&#"\\s]*`, 'gi');
/** The secret part of a password-reset link: `/password_reset/<token>`. */
const RESET_LINK_TOKEN = /(\/password_reset\/)[^/?#"\s]+/g;
/** An e-mail address, plain or percent-encoded (`%40`); its local part as sign-up accepts it (apostrophes too). */
const EMAIL_ADDRESS = /[A-Za-z0-9._%+'-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/**
 * Text with every secret it visibly carries censored: reset-link tokens, sensitive query values,
 * sensitive JSON fields and e-mail addresses. Applied to each log line as a whole, so a secret
 * that reaches a message, an error or a nested object the redact paths do not name is still caught.
 */
export function redactText(text: string): string {
  let out = text;
  if (out.includes('/password_reset/')) out = out.replace(RESET_LINK_TOKEN, `$1${CENSORED}`);
  if (out.includes('=')) out = out.replace(SENSITIVE_QUERY_VALUE, `$1${CENSORED}`);
  if (out.includes('":"')) out = out.replace(SENSITIVE_JSON_FIELD, `"$1":"${CENSORED}"`);
  if (out.includes('@') || out.includes('%40')) out = out.replace(EMAIL_ADDRESS, CENSORED_EMAIL);
  return out;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  headers?: Record<string, unknown>;
  socket?: { remotePort?: number };
}

/**
 * The pino options of every process (embedded, each cluster process, tests): one place, so the
 * redaction cannot drift between them. Requests are logged as Fastify does (method, URL, host,
 * client), their URL censored; headers are never logged; known secret fields are censored by
 * path and every line is censored once more as text before it is written.
 */
export function loggerOptions(options: { level?: string } = {}): LoggerOptions {
  return {
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: CENSORED },
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: typeof req.url === 'string' ? redactText(req.url) : req.url,
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
      err: pino.stdSerializers.err,
    },
    hooks: { streamWrite: redactText },
  };
}

/** Requests whose caller writes their access line itself, in the same log (see `loggedByCaller`). */
const callerLogged = new WeakSet<object>();

/**
 * Marks a request whose caller logs it: its `request completed` line is then written at debug,
 * not info. The embedded gateway calls each service in process and writes the request's line in
 * the same log, under the same id; at info a request is then one line, not one per service it
 * reached (the services' lines stay one `LOG_LEVEL=debug` away). Errors are logged as always.
 */
export function loggedByCaller(request: FastifyRequest): void {
  callerLogged.add(request.raw);
}

/**
 * Fastify's request logging with one line per request, written when its answer is sent:
 * `request completed` (or `request errored`) with the request (method, censored URL, client), the
 * status and the time taken. Fastify's own writes `incoming request` too, and in the embedded
 * profile every service a request reaches logs it again: six lines for one authenticated read,
 * each censored as text, about a tenth of a small request's cost. Error lines stay as they are.
 * A request its caller logs (`loggedByCaller`) completes at debug.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (callerLogged.has(request.raw)) reply.log.debug({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
