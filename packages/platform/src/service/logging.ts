import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type LoggerOptions } from 'pino';

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

/**
 * Set on a request (Node's) whose caller writes its access line itself, in the same log (see
 * `loggedByCaller`): a property, not a WeakSet, whose add and lookup were about 1 % of a feed page
 * through the gateway.
 */
const CALLER_LOGS = Symbol('castie.callerLogs');
interface CallerLogged {
  [CALLER_LOGS]?: true;
}

/**
 * Marks a request whose caller logs it: its `request completed` line is then written at debug,
 * not info. The embedded gateway calls each service in process and writes the request's line in
 * the same log, under the same id; at info a request is then one line, not one per service it
 * reached (the services' lines stay one `LOG_LEVEL=debug` away). Errors are logged as always.
 */
export function loggedByCaller(request: FastifyRequest): void {
  (request.raw as CallerLogged)[CALLER_LOGS] = true;
}

/** Fastify's default label of the request id in log lines (neither app changes it). */
const REQUEST_ID_LABEL = 'reqId';

/**
 * Per app logger, the logger its request lines are written with: the same log, without the
 * redact paths. A request line holds only what the serializers above make of the request (method,
 * censored URL, host, client) and of the reply (status), and the time taken, so no path can hold
 * a secret there; the redact paths (one level of wildcards over every key) were a third of the
 * line's cost. Every line is still censored as text when it is written.
 */
const requestLines = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();
function requestLinesOf(logger: FastifyBaseLogger): FastifyBaseLogger {
  let lines = requestLines.get(logger);
  if (!lines) requestLines.set(logger, (lines = logger.child({}, { redact: { paths: [], censor: CENSORED } })));
  return lines;
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
    if (error) return reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    const lines = requestLinesOf(request.server.log);
    const line = { [REQUEST_ID_LABEL]: request.id, req: request, res: reply, responseTime: reply.elapsedTime };
    if ((request.raw as CallerLogged)[CALLER_LOGS]) lines.debug(line, 'request completed');
    else lines.info(line, 'request completed');
  }
}

/**
 * Fastify's `childLoggerFactory`: a request's own logger (its lines carry the request id), made
 * the first time the request logs something at a level that is written. Fastify made one for
 * every request, and most never log: their one line goes through `OneLinePerRequest`, and a
 * service's requests from the gateway log nothing at info. Making a pino child (its bindings
 * serialized, its formatters built) was a twentieth of a small request's cost.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}

/** The levels by name, as pino numbers them (pino's defaults, which neither app changes). */
const LEVELS: Readonly<Record<string, number>> = pino.levels.values;

class RequestLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | null = null;
  #level: string | null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {
    this.#level = typeof options.level === 'string' ? options.level : null;
  }

  get level(): string {
    return this.#made?.level ?? this.#level ?? this.parent.level;
  }

  set level(level: string) {
    this.#level = level;
    if (this.#made) this.#made.level = level;
  }

  /** The pino child, made once, for a line that is written. */
  #logger(): FastifyBaseLogger {
    if (!this.#made) {
      this.#made = this.parent.child(this.bindings, this.options);
      if (this.#level !== null) this.#made.level = this.#level;
    }
    return this.#made;
  }

  #writes(level: string): boolean {
    const threshold = LEVELS[this.level];
    return threshold === undefined || (LEVELS[level] ?? 0) >= threshold;
  }

  // One function per level on the prototype, shared by every request's logger: as arrow-function
  // fields they were seven closures made per request (under tsx, each named by defineProperty:
  // 5 % of a small request through the gateway bench).
  declare fatal: pino.LogFn;
  declare error: pino.LogFn;
  declare warn: pino.LogFn;
  declare info: pino.LogFn;
  declare debug: pino.LogFn;
  declare trace: pino.LogFn;
  declare silent: pino.LogFn;
  static {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
      RequestLogger.prototype[level] = function (this: RequestLogger, ...args: Parameters<pino.LogFn>) {
        if (this.#writes(level)) this.#logger()[level](...args);
      } as pino.LogFn;
    }
    RequestLogger.prototype.silent = () => undefined;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}
