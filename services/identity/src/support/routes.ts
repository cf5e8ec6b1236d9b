import { identityAdminApi } from '@castie/contracts';
import { adminRoutesOnlyFromGateway, newId, route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { accountStreamId, loginStreamId, type IdentityContext } from '../context.ts';
import { handleStreamId } from '../login/handle-claim.ts';

/**
 * Support creates an account for someone (POST /admin/accounts/), reached only through the
 * gateway's /admin/ forwarder. It runs the very commands of the app's four sign-up steps, so
 * every invariant holds the same way: the login stream makes the e-mail unique, the handle claim
 * the handle, the contract the password and name rules. If the handle is taken, the login and
 * account just opened are abandoned as `/api/signup/incomplete/` would, freeing the e-mail.
 */
export function supportRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'accounts' | 'checkResponses' | 'clock' | 'handles' | 'logins' | 'passwords'>): void {
  adminRoutesOnlyFromGateway(app);
  const meta = () => ({ actor: 'admin', now: ctx.clock.now() });

  route(
    app,
    identityAdminApi.createAccount,
    async ({ body, wrote }) => {
      const userId = newId();
      const passwordHash = await ctx.passwords.hash(body.password);
      await ctx.logins.handle(loginStreamId(body.email), { type: 'CreateLogin', userId, email: body.email, passwordHash, context: 'signup' }, meta());
      wrote((await ctx.accounts.handle(accountStreamId(userId), { type: 'OpenAccount', userId }, meta())).positions);
      try {
        await ctx.handles.handle(handleStreamId(body.handle), { type: 'ClaimHandle', userId, handle: body.handle }, meta());
      } catch (error) {
        wrote((await ctx.accounts.handle(accountStreamId(userId), { type: 'AbandonSignUp' }, meta())).positions);
        await ctx.logins.handle(loginStreamId(body.email), { type: 'CloseLogin', userId, reason: 'sign-up-abandoned' }, meta());
        throw error;
      }
      wrote((await ctx.accounts.handle(accountStreamId(userId), { type: 'NameProfile', handle: body.handle, firstName: body.first_name, lastName: body.last_name }, meta())).positions);
      wrote((await ctx.accounts.handle(accountStreamId(userId), { type: 'CompleteSignUp', handle: body.handle, profPic: '', now: ctx.clock.now() }, meta())).positions);
      return { email: body.email, handle: body.handle, user_uuid: userId, message: `the account of ${body.handle} has been created; they can sign in now` };
    },
    { checkResponses: ctx.checkResponses ?? false },
  );
}
