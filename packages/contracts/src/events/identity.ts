import { z } from 'zod';
import { defineEventCatalog, type EventOf } from './catalog.ts';

/**
 * Identity publishes two topics. `identity` is public: every service builds its copy of people
 * (handle, names, picture, privacy, activity) from it. `identity-logins` is private to identity:
 * credentials and the claims that keep e-mails and handles unique never leave the service.
 */
export const IDENTITY_TOPIC = 'identity';
export const IDENTITY_LOGINS_TOPIC = 'identity-logins';

const userId = z.string().regex(/^[0-9a-f]{32}$/);

export const identityEvents = defineEventCatalog(IDENTITY_TOPIC, {
  /** The password step created the account; it is not complete until the picture step. */
  AccountOpened: z.object({ userId }),
  ProfileNamed: z.object({ userId, handle: z.string(), firstName: z.string(), lastName: z.string() }),
  SignUpCompleted: z.object({ userId, profPic: z.string() }),
  /** Changed fields only. */
  ProfileEdited: z.object({
    userId,
    handle: z.string().optional(),
    firstName: z.string().optional(),
    lastName: z.string().optional(),
    city: z.string().optional(),
    state: z.string().optional(),
  }),
  ProfilePictureChanged: z.object({ userId, profPic: z.string(), changedAt: z.string().datetime() }),
  PrivacyChanged: z.object({ userId, isPrivate: z.boolean() }),
  AccountDeleted: z.object({ userId, handle: z.string().nullable() }),
  SignUpAbandoned: z.object({ userId }),
});
export type IdentityEvent = EventOf<typeof identityEvents.schemas>;

const closeReason = z.enum(['email-changed', 'account-deleted', 'sign-up-abandoned']);

export const loginEvents = defineEventCatalog(IDENTITY_LOGINS_TOPIC, {
  /** Stream `login-<email>`: the e-mail is taken by this user with this password hash. */
  LoginCreated: z.object({ userId, email: z.string() }).extend({ passwordHash: z.string() }),
  PasswordChanged: z.object({ userId, passwordHash: z.string() }),
  LoginClosed: z.object({ userId, reason: closeReason }),
  /** Stream `handle-<lowercased handle>`. */
  HandleClaimed: z.object({ userId, handle: z.string() }),
  HandleReleased: z.object({ userId }),
  /** Stream `reset-<token hash>`: a password-reset link was sent; it works once, until it expires. */
  PasswordResetRequested: z.object({ userId, email: z.string(), expiresAt: z.string().datetime() }),
  PasswordResetUsed: z.object({ userId }),
});
export type LoginEvent = EventOf<typeof loginEvents.schemas>;
