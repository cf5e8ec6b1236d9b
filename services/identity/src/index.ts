export { buildIdentityApp } from './app.ts';
export type { IdentityDeps } from './context.ts';
export { argon2idHasher, type PasswordHasher } from './sign-in/passwords.ts';
