export { buildIdentityApp } from './app.ts';
export type { IdentityDeps } from './context.ts';
export { identityModule } from './module.ts';
export { argon2idHasher, type PasswordHasher } from './sign-in/passwords.ts';
