import { z } from 'zod';
import { ok } from './endpoint.ts';

/*
 * Routes outside the endpoint table that the gateway serves itself or passes through: the
 * password-reset web pages (HTML, answered by identity) and the operators' clock. Their inputs are
 * here so that the service, the gateway and the OpenAPI document read the same schemas.
 */

/** POST /password_reset/: the address to send a reset link to. */
export const PasswordResetEmailFormSchema = z.object({ email: z.string().trim().toLowerCase().pipe(z.email()) });
/** POST /password_reset/{token}/: the new password, typed twice. */
export const PasswordResetFormSchema = z.object({ password: z.string().min(4).max(256), password_confirm: z.string() });
/** The token of a reset link (URL-safe base64). */
export const PasswordResetTokenParams = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/) });

/** At most a year at a time: enough for any test or demo, and no instant past what Date can hold. */
export const MAX_CLOCK_ADVANCE_SECONDS = 366 * 24 * 3600;
/** POST /admin/clock/ (CLOCK=manual only): a number of seconds, a JSON number or plain decimal digits (no booleans, exponents or signs). */
export const AdminClockBodySchema = z.object({
  advance_seconds: z
    .union([z.number(), z.string().regex(/^\d{1,9}(\.\d{1,6})?$/).transform(Number)])
    .pipe(z.number().positive().max(MAX_CLOCK_ADVANCE_SECONDS))
    // The transform hides the input side from JSON Schema: this is what clients may send.
    .meta({ override: { type: ['number', 'string'], exclusiveMinimum: 0, maximum: MAX_CLOCK_ADVANCE_SECONDS, pattern: '^\\d{1,9}(\\.\\d{1,6})?$' } }),
});
export const AdminClockResponseSchema = ok({ now: z.string().meta({ format: 'date-time' }) });
