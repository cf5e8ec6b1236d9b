import { z } from 'zod';

/** Every error_type the API can answer with, and its HTTP status (status in body = HTTP status). */
export const errorStatus = {
  object_not_found: 404,
  not_found: 404,
  inactive_user: 404,
  email_not_unique: 400,
  handle_not_unique: 400,
  cannot_forecast: 400,
  improper_group_request: 400,
  castie_not_created: 400,
  cannot_add_frodad: 400,
  invalid_request: 400,
  authentication_failed: 401,
  authorization_failed: 401,
  comment_not_created: 400,
  account_not_created: 400,
  incorrect_request_type: 400,
  missing_request_data: 400,
  castie_not_answerable: 400,
  improper_frodad_response: 400,
  not_allowed: 400,
  payload_too_large: 400,
  headers_too_large: 431,
  too_many_requests: 429,
  /** A service is rebuilding its read models (operators asked for it); try again shortly. */
  service_unavailable: 503,
  server_error: 500,
} as const;
export type ErrorType = keyof typeof errorStatus;
export const ErrorTypeSchema = z.enum(Object.keys(errorStatus) as [ErrorType, ...ErrorType[]]).meta({ id: 'ErrorType' });

export const ErrorBodySchema = z
  .object({
    status: z.number().int(),
    error_type: ErrorTypeSchema,
    error_message: z.string(),
    handle: z.string().optional(),
    group_slug: z.string().optional(),
  })
  .strict()
  .meta({ id: 'Error', description: 'The error envelope: status (= HTTP status), error_type and a descriptive error_message; some errors add handle and group_slug.' });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * A rule of the domain said no. Deciders throw it; the one error handler renders it in the
 * spec's envelope. `extra` carries the fields some errors add (handle, group_slug).
 */
export class DomainError extends Error {
  status: number;
  constructor(
    readonly errorType: ErrorType,
    message: string,
    readonly extra: { handle?: string; group_slug?: string } = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = errorStatus[errorType];
  }

  /** The same error with another status (the spec answers object_not_found with 400 on account deletion). */
  withStatus(status: number): DomainError {
    const copy = new DomainError(this.errorType, this.message, this.extra);
    copy.status = status;
    return copy;
  }

  toBody(): ErrorBody {
    return { status: this.status, error_type: this.errorType, error_message: this.message, ...this.extra };
  }
}

/** The texts clients of the original app show; keep them word for word. */
export const messages = {
  castieNotFound: 'the requested castie could not be found. make sure you are sending a valid uuid',
  userNotFound: 'the requested user could not be found',
  inactiveUser: 'the profile you requested is not active',
  groupNotFound: 'the requested group could not be found',
  emailNotUniqueSignup: 'the email address provided is already associated with a Cassie account. it cannot be used to create a new account.',
  emailNotUniquePreferences: 'the email address provided is already associated with a Cassie account. it cannot be used again.',
  handleNotUnique: 'the handle provided is already associated with a Cassie account',
  invalidImage: 'Images must be in .jpg, .jpeg, .gif, .png format.',
  authenticationFailed: 'invalid username or password',
  /** Preferences and profile edits answer it with 200; configuring a group refuses with it (400). */
  nothingChanged: 'nothing has changed- no data to update',
} as const;
