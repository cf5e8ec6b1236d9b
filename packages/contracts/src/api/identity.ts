import { z } from 'zod';
import { endpoint, ok } from './endpoint.ts';
import { formBoolean, line, passwordText, text, textLimits, UploadRefSchema } from './form.ts';

/** Rules for the values people choose at sign-up and in their profile (spec: Limits). */
export const rules = {
  passwordMin: 4,
  handleMin: 3,
  handleMax: 30,
  nameMax: textLimits.name,
  placeMax: textLimits.place,
} as const;

const email = text().toLowerCase().pipe(z.email({ error: 'must be a valid e-mail address' }).max(254));
/** Sign-up: names and handle ASCII alphanumeric. */
const signupName = text().pipe(z.string().min(1, 'is required').max(rules.nameMax).regex(/^[A-Za-z0-9]+$/, 'must contain only ASCII letters and digits'));
const signupHandle = text().pipe(
  z.string().min(rules.handleMin, `must have at least ${rules.handleMin} characters`).max(rules.handleMax).regex(/^[A-Za-z0-9]+$/, 'must contain only ASCII letters and digits'),
);
/** Profile edit: handle ASCII, no @ or /, no spaces. */
const editHandle = text().pipe(
  z
    .string()
    .min(rules.handleMin, `must have at least ${rules.handleMin} characters`)
    .max(rules.handleMax)
    .regex(/^[\x21-\x7e]+$/, 'must contain only ASCII characters without spaces')
    .refine((h) => !h.includes('@') && !h.includes('/'), 'must contain neither @ nor /'),
);
const password = passwordText();
const optionalText = (max: number) => line(max).optional();

export const identityApi = {
  signupEmail: endpoint({
    method: 'POST',
    paths: ['/api/signup/email/'],
    service: 'identity',
    access: 'none',
    invalidAs: 'account_not_created',
    body: z.object({ email }),
    response: ok({ email: z.string(), message: z.string() }),
  }),
  signupPassword: endpoint({
    method: 'POST',
    paths: ['/api/signup/password/'],
    service: 'identity',
    access: 'none',
    invalidAs: 'account_not_created',
    body: z.object({ email, password }),
    response: ok({ email: z.string(), username: z.string(), message: z.string() }),
  }),
  signupHandle: endpoint({
    method: 'POST',
    paths: ['/api/signup/handle/'],
    service: 'identity',
    access: 'none',
    invalidAs: 'account_not_created',
    body: z.object({ first_name: signupName, last_name: signupName, handle: signupHandle, email }),
    response: ok({ handle: z.string(), message: z.string() }),
  }),
  signupPicture: endpoint({
    method: 'POST',
    paths: ['/api/signup/picture/'],
    service: 'identity',
    access: 'none',
    invalidAs: 'account_not_created',
    uploads: ['profPic'],
    body: z.object({ handle: line(rules.handleMax), email, profPic: UploadRefSchema.optional() }),
    response: ok({ email: z.string(), handle: z.string(), message: z.string() }),
  }),
  signupIncomplete: endpoint({
    method: 'POST',
    paths: ['/api/signup/incomplete/'],
    service: 'identity',
    access: 'none',
    body: z.object({ email }),
    response: ok({ message: z.string() }),
  }),
  getPreferences: endpoint({
    method: 'GET',
    paths: ['/api/preferences/'],
    service: 'identity',
    access: 'user',
    response: ok({ is_private: z.boolean() }),
  }),
  setPreferences: endpoint({
    method: 'POST',
    paths: ['/api/preferences/'],
    service: 'identity',
    access: 'user',
    body: z.object({ is_private: formBoolean }),
    response: ok({ message: z.string(), is_private: z.boolean() }),
  }),
  getEmail: endpoint({
    method: 'GET',
    paths: ['/api/preferences/edit/email/'],
    service: 'identity',
    access: 'user',
    response: ok({ email: z.string() }),
  }),
  setEmail: endpoint({
    method: 'POST',
    paths: ['/api/preferences/edit/email/'],
    service: 'identity',
    access: 'user',
    body: z.object({ email }),
    response: ok({ message: z.string(), new_email: z.string(), new_username: z.string() }),
  }),
  getPassword: endpoint({
    method: 'GET',
    paths: ['/api/preferences/edit/password/'],
    service: 'identity',
    access: 'user',
    response: ok({ password: z.string() }),
  }),
  setPassword: endpoint({
    method: 'POST',
    paths: ['/api/preferences/edit/password/'],
    service: 'identity',
    access: 'user',
    // The body's `password` field also carries credentials; the new one is `new_password` when
    // both are sent, else `password` (HTTP Basic carries the current one).
    body: z.object({ password: password.optional(), new_password: password.optional() }),
    response: ok({ message: z.string() }),
  }),
  getProfileEdit: endpoint({
    method: 'GET',
    paths: ['/api/profile/:handle/edit/'],
    service: 'identity',
    access: 'user',
    params: z.object({ handle: z.string() }),
    response: ok({
      handle: z.string(),
      firstName: z.string(),
      lastName: z.string(),
      city: z.string(),
      state: z.string(),
      profPic: z.string(),
      backgroundPic: z.string(),
    }),
  }),
  editProfile: endpoint({
    method: 'POST',
    paths: ['/api/profile/edit/'],
    service: 'identity',
    access: 'user',
    uploads: ['profPic'],
    invalidAs: 'invalid_request',
    body: z.object({
      handle: editHandle.optional(),
      firstName: optionalText(rules.nameMax),
      lastName: optionalText(rules.nameMax),
      city: optionalText(rules.placeMax),
      state: optionalText(rules.placeMax),
      profPic: UploadRefSchema.optional(),
    }),
    response: ok({ message: z.string(), updated_fields: z.array(z.string()).optional() }),
  }),
  deleteAccount: endpoint({
    method: 'POST',
    paths: ['/api/profile/:handle/delete/'],
    service: 'identity',
    access: 'user',
    params: z.object({ handle: z.string() }),
    response: ok({ handle_deleted: z.string(), message: z.string() }),
  }),
} as const;

/** Internal: the gateway asks identity who presented these credentials. */
export const AuthenticateRequestSchema = z.object({ email: z.string(), password: z.string() });
export const AuthenticatedUserSchema = z.object({ userId: z.string(), handle: z.string(), email: z.string() });
export type AuthenticatedUser = z.infer<typeof AuthenticatedUserSchema>;
/**
 * Identity's answer: the user, and the person's credential stamp as it was before the check (see
 * CredentialStamps); null when the check cannot vouch for one, and the answer must not be kept.
 */
export const VerifiedCredentialsSchema = z.object({ user: AuthenticatedUserSchema, stamp: z.string().nullable() });
export type VerifiedCredentials = z.infer<typeof VerifiedCredentialsSchema>;

/**
 * The operators' API of identity (behind the gateway's /admin/ bearer token, forwarded with
 * `x-castie-admin: true`): support creates a complete account for someone, through the same
 * sign-up commands as the app (unique e-mail and handle, password rules).
 */
export const identityAdminApi = {
  createAccount: endpoint({
    method: 'POST',
    paths: ['/admin/accounts/'],
    service: 'identity',
    access: 'none',
    invalidAs: 'account_not_created',
    body: z.object({ email, password, handle: signupHandle, first_name: signupName, last_name: signupName }),
    response: ok({ email: z.string(), handle: z.string(), user_uuid: z.string(), message: z.string() }),
  }),
} as const;
