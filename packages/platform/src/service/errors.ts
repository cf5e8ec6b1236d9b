import { DomainError, errorStatus, type ErrorBody, type ErrorType } from '@castie/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
