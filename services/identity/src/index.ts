export { buildIdentityApp } from './app.ts';
export type { IdentityDeps } from './context.ts';
export { identityModule } from './module.ts';
export { argon2idHasher, type PasswordHasher } from './sign-in/passwords.ts';
export { accountStreamId, loginStreamId } from './context.ts';
export { accountDecider, type AccountCommand, type AccountState } from './account/decider.ts';
export { loginDecider, type LoginCommand, type LoginState } from './login/decider.ts';
export { handleClaimDecider, handleStreamId, type HandleClaimCommand, type HandleClaimState } from './login/handle-claim.ts';
