import type { LoginEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, it } from 'vitest';
import { loginDecider } from './decider.ts';
import { handleClaimDecider } from './handle-claim.ts';

const ada = 'a'.repeat(32);
const bob = 'b'.repeat(32);
const created: LoginEvent = { type: 'LoginCreated', data: { userId: ada, email: 'ada@example.com', passwordHash: 'h1' } };
const login = deciderSpec(loginDecider);
const claims = deciderSpec(handleClaimDecider);

describe('login decider (one per e-mail address)', () => {
  it('takes a free address', () => login.given([]).when({ type: 'CreateLogin', userId: ada, email: 'ada@example.com', passwordHash: 'h1', context: 'signup' }).then([created]));
  it('refuses a taken address with the sign-up message', () =>
    login.given([created]).when({ type: 'CreateLogin', userId: bob, email: 'ada@example.com', passwordHash: 'h2', context: 'signup' }).thenFails('email_not_unique', /create a new account/));
  it('refuses a taken address with the preferences message', () =>
    login.given([created]).when({ type: 'CreateLogin', userId: bob, email: 'ada@example.com', passwordHash: 'h2', context: 'preferences' }).thenFails('email_not_unique', /cannot be used again/));
  it('frees the address once closed, for anyone', () =>
    login
      .given([created, { type: 'LoginClosed', data: { userId: ada, reason: 'account-deleted' } }])
      .when({ type: 'CreateLogin', userId: bob, email: 'ada@example.com', passwordHash: 'h2', context: 'signup' })
      .then([{ type: 'LoginCreated', data: { userId: bob, email: 'ada@example.com', passwordHash: 'h2' } }]));
  it('changes the password of its owner only', () => {
    login.given([created]).when({ type: 'ChangePassword', userId: ada, passwordHash: 'h3' }).then([{ type: 'PasswordChanged', data: { userId: ada, passwordHash: 'h3' } }]);
    login.given([created]).when({ type: 'ChangePassword', userId: bob, passwordHash: 'h3' }).thenFails('authentication_failed');
  });
  it('closing twice is a no-op', () => login.given([created, { type: 'LoginClosed', data: { userId: ada, reason: 'email-changed' } }]).when({ type: 'CloseLogin', userId: ada, reason: 'email-changed' }).thenNothing());
});

describe('handle claim decider', () => {
  const claimed: LoginEvent = { type: 'HandleClaimed', data: { userId: ada, handle: 'Ada' } };
  it('claims a free handle', () => claims.given([]).when({ type: 'ClaimHandle', userId: ada, handle: 'Ada' }).then([claimed]));
  it('refuses a handle another user holds', () => claims.given([claimed]).when({ type: 'ClaimHandle', userId: bob, handle: 'ada' }).thenFails('handle_not_unique'));
  it('claiming one own handle again changes nothing', () => claims.given([claimed]).when({ type: 'ClaimHandle', userId: ada, handle: 'Ada' }).thenNothing());
  it('lets its holder change the case', () => claims.given([claimed]).when({ type: 'ClaimHandle', userId: ada, handle: 'ADA' }).then([{ type: 'HandleClaimed', data: { userId: ada, handle: 'ADA' } }]));
  it('releases only for its holder', () => {
    claims.given([claimed]).when({ type: 'ReleaseHandle', userId: bob }).thenNothing();
    claims.given([claimed]).when({ type: 'ReleaseHandle', userId: ada }).then([{ type: 'HandleReleased', data: { userId: ada } }]);
  });
});
