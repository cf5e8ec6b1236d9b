import { DomainError, errorStatus, type ErrorBody, type ErrorType } from '@castie/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { z } from 'zod';

/** A request whose parameters failed their schema: becomes missing_request_data (or the endpoint's invalidAs). */
export class RequestValidationError extends Error {
  constructor(
    readonly errorType: ErrorType,
    message: string,
  ) {
    super(message);
    this.name = 'RequestValidationError';
  }
}

/**
 * Turns zod issues into one clear sentence naming the parameter. A parameter that is absent is
 * `missing_request_data`; one that is present but unacceptable uses `invalidAs`.
 */
export function validationError(error: z.ZodError, input: unknown, invalidAs: ErrorType): RequestValidationError {
  const issue = error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  const value = path ? (input as Record<string, unknown> | undefined)?.[issue!.path[0] as string] : input;
  if (value === undefined || value === null) return new RequestValidationError('missing_request_data', `${path || 'a parameter'} is required`);
  const reason = issue?.message ?? 'is invalid';
  return new RequestValidationError(invalidAs, `${path} ${reason.startsWith('Invalid') ? 'is invalid' : reason}`);
}

/** Too many attempts: 429 too_many_requests with a Retry-After header (seconds). */
export class RateLimited extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('too_many_requests', message);
    this.name = 'RateLimited';
  }
}

/** A service this answer needs is briefly unavailable: 503 service_unavailable with a Retry-After header (seconds). */
export class Unavailable extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super('service_unavailable', message);
    this.name = 'Unavailable';
  }
}

export function errorBody(errorType: ErrorType, message: string, extra: Partial<ErrorBody> = {}): ErrorBody {
  return { status: errorStatus[errorType], error_type: errorType, error_message: message, ...extra };
}

/**
 * Errors Fastify raises before routing (a URL that cannot be decoded, …), in the same envelope:
 * pass as the `frameworkErrors` option.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(400).send(errorBody('missing_request_data', `the request could not be read: ${error.message}`));
}

/**
 * The one error path of every app: domain and validation errors render the spec's envelope;
 * anything else is a 500 whose details stay in the log.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | DomainError | RequestValidationError, request, reply) => {
    if (error instanceof RateLimited || error instanceof Unavailable) reply.header('retry-after', String(error.retryAfterSeconds));
    if (error instanceof DomainError) return reply.code(error.status).send(error.toBody());
    if (error instanceof RequestValidationError) return reply.code(errorStatus[error.errorType]).send(errorBody(error.errorType, error.message));
    const fe = error as FastifyError;
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe.code === 'FST_REQ_FILE_TOO_LARGE' || fe.statusCode === 413) {
      return reply.code(400).send(errorBody('payload_too_large', 'the request is too large'));
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.code(400).send(errorBody('missing_request_data', `the request could not be read: ${fe.message}`));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody('server_error', 'something went wrong on our side. please try again'));
  });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over the size limit,
 * broken framing) answered in the envelope too: pass as the `clientErrorHandler` option.
 */
export function clientErrors(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify(tooLarge ? errorBody('headers_too_large', 'the request headers are too large') : errorBody('missing_request_data', 'the request could not be read as HTTP'));
  const status = tooLarge ? 431 : 400;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** How deep a JSON body may nest: far more than any request needs, far less than a stack holds. */
export const MAX_JSON_DEPTH = 32;

/** The depth of the deepest array or object in JSON text (strings skipped), counted without parsing. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) deepest = Math.max(deepest, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}

/**
 * JSON bodies through one parser: nesting beyond MAX_JSON_DEPTH and broken JSON are a 400 in the
 * envelope (a deep body would otherwise overflow the stack later, as a 500).
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    if (jsonDepth(text) > MAX_JSON_DEPTH) return done(new DomainError('missing_request_data', `the JSON body is nested more than ${MAX_JSON_DEPTH} levels deep`), undefined);
    try {
      done(null, JSON.parse(text) as unknown);
    } catch {
      done(new DomainError('missing_request_data', 'the body is not valid JSON'), undefined);
    }
  });
}

/**
 * One reading of a path for the gateway and every service: a `.` or `..` segment, plain or
 * percent-encoded, never routes (URL parsers would fold it into another path); it is a 404.
 */
export function refuseDotSegments(app: FastifyInstance): void {
  // A callback hook, as on every request of every service: nearly all pass without a promise.
  app.addHook('onRequest', (request, reply, done) => {
    const query = request.url.indexOf('?');
    const path = query < 0 ? request.url : request.url.slice(0, query);
    if (!path.includes('.') && !path.includes('%')) return done();
    for (const segment of path.split('/')) {
      if (!segment.includes('.') && !segment.includes('%')) continue;
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        continue;
      }
      if (decoded === '.' || decoded === '..') {
        reply.code(404).send(errorBody('not_found', `no such endpoint: ${request.method} ${path}`));
        return;
      }
    }
    done();
  });
}
