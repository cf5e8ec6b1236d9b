import { api, DomainError } from '@castie/contracts';
import { route, type Caller } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { accountStreamId, loginStreamId, type IdentityContext } from '../context.ts';

/** Privacy, e-mail (which is also the username) and password of the signed-in user. */
export function preferencesRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'accounts' | 'checkResponses' | 'clock' | 'logins' | 'passwords'>): void {
  const opts = { checkResponses: ctx.checkResponses };
  const meta = (caller: Caller) => ({ actor: caller.userId, now: ctx.clock.now() });

  async function profileOf(caller: Caller) {
    const { state } = await ctx.accounts.load(accountStreamId(caller.userId));
    if (state.status !== 'active') throw new DomainError('authentication_failed', 'this account is not active');
    return state;
  }

  route(app, api.identity.getPreferences, async ({ caller }) => ({ is_private: (await profileOf(caller)).isPrivate }), opts);

  route(
    app,
    api.identity.setPreferences,
    async ({ caller, body, wrote }) => {
      const done = await ctx.accounts.handle(accountStreamId(caller.userId), { type: 'SetPrivacy', isPrivate: body.is_private }, meta(caller));
      wrote(done.positions);
      const message = done.events.length > 0 ? 'data has been successfully updated' : 'nothing has changed- no data to update';
      return { message, is_private: body.is_private };
    },
    opts,
  );

  route(app, api.identity.getEmail, async ({ caller }) => ({ email: caller.email }), opts);

  route(
    app,
    api.identity.setEmail,
    async ({ caller, body }) => {
      if (body.email !== caller.email) {
        const { state: login } = await ctx.logins.load(loginStreamId(caller.email));
        if (login.status !== 'open' || login.userId !== caller.userId) throw new DomainError('authentication_failed', 'this login is no longer valid');
        // Take the new address first (it may be taken), then free the old one.
        await ctx.logins.handle(loginStreamId(body.email), { type: 'CreateLogin', userId: caller.userId, email: body.email, passwordHash: login.passwordHash, context: 'preferences' }, meta(caller));
        await ctx.logins.handle(loginStreamId(caller.email), { type: 'CloseLogin', userId: caller.userId, reason: 'email-changed' }, meta(caller));
      }
      return { message: 'email has been successfully updated', new_email: body.email, new_username: body.email };
    },
    opts,
  );

  // Never the hash, nor anything derived from it: a fixed mask.
  route(app, api.identity.getPassword, async () => ({ password: '********' }), opts);

  route(
    app,
    api.identity.setPassword,
    async ({ caller, body }) => {
      // With HTTP Basic the body's `password` is the new one; with credentials in the body the
      // gateway consumed `password` and the new one comes as `new_password`.
      const password = body.new_password ?? body.password;
      if (!password) throw new DomainError('missing_request_data', 'password is required');
      const passwordHash = await ctx.passwords.hash(password);
      await ctx.logins.handle(loginStreamId(caller.email), { type: 'ChangePassword', userId: caller.userId, passwordHash }, meta(caller));
      return { message: 'password has been successfully updated' };
    },
    opts,
  );
}
