import { identityEvents, loginEvents } from '@castie/contracts';
import { CommandHandler, CredentialStamps, type Cache, type Clock, type EventStore, type Mailer } from '@castie/platform';
import { accountDecider } from './account/decider.ts';
import { handleClaimDecider } from './login/handle-claim.ts';
import { loginDecider } from './login/decider.ts';
import type { PasswordHasher } from './sign-in/passwords.ts';
import { CredentialVerifier, type CredentialCacheObserver } from './sign-in/credentials.ts';
import { StampedCommandHandler } from './sign-in/stamped-commands.ts';
import { resetDecider } from './password-reset/decider.ts';

export interface IdentityDeps {
  /** Event store of the public topic `identity` (accounts). */
  accounts: EventStore;
  /** Event store of the private topic `identity-logins` (logins, handle claims, reset tokens). */
  logins: EventStore;
  clock: Clock;
  mailer: Mailer;
  passwords: PasswordHasher;
  /** Secret that keys the verified-credentials cache and reset tokens. */
  secret: string;
  /** Where people reach the service (links in e-mails), e.g. http://localhost:8080. */
  publicUrl: string;
  /** Check every response against its contract (on in tests). */
  checkResponses?: boolean;
  /** Where the credential stamps live (CredentialStamps), shared with the gateways. */
  cache: Cache;
  /** Counts hits and misses of the verified-credentials cache (metrics). */
  credentialCache?: CredentialCacheObserver;
}

/** What the features of identity share: the aggregates' command handlers and the verifier. */
export function identityContext(deps: IdentityDeps) {
  const stamps = new CredentialStamps(deps.cache);
  // Every command on a login or an account may change what credentials open: a new stamp before
  // it (verified credentials kept so far stop counting) and after it (those verified meanwhile).
  const accounts = new StampedCommandHandler(deps.accounts, identityEvents, accountDecider, stamps, (streamId) => streamId.slice('account-'.length));
  const logins = new StampedCommandHandler(deps.logins, loginEvents, loginDecider, stamps, (_streamId, command) => command.userId);
  const handles = new CommandHandler(deps.logins, loginEvents, handleClaimDecider);
  const resets = new CommandHandler(deps.logins, loginEvents, resetDecider);
  const verifier = new CredentialVerifier(logins, accounts, deps.passwords, deps.secret, stamps, deps.credentialCache ? { observer: deps.credentialCache } : {});
  return { ...deps, accounts, logins, handles, resets, verifier };
}
export type IdentityContext = ReturnType<typeof identityContext>;

export const accountStreamId = (userId: string): string => `account-${userId}`;
export const loginStreamId = (email: string): string => `login-${email.trim().toLowerCase()}`;
