import { api, DomainError, mediaPath, messages } from '@castie/contracts';
import { newId, route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { accountStreamId, loginStreamId, type IdentityContext } from '../context.ts';
import { handleStreamId } from '../login/handle-claim.ts';

/**
 * Sign-up in four steps (email, password, handle, picture) and its abandonment. No credentials
 * needed: each step's writes are named as the new user's, so that user's first requests see
 * their account (rule 6) whichever service answers.
 */
export function signUpRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'accounts' | 'checkResponses' | 'clock' | 'handles' | 'logins' | 'passwords'>): void {
  const opts = { checkResponses: ctx.checkResponses };
  const meta = (actor: string) => ({ actor, now: ctx.clock.now() });

  /** The account an e-mail's login points to, for the steps after the password. */
  async function signingUp(email: string) {
    const { state: login } = await ctx.logins.load(loginStreamId(email));
    if (login.status !== 'open') throw new DomainError('account_not_created', 'no account is being created for this e-mail address: start with the password step');
    const { state } = await ctx.accounts.load(accountStreamId(login.userId));
    return { userId: login.userId, account: state };
  }

  /** The user id of an unfinished sign-up of this e-mail with this very password, else null. */
  async function resumableSignUp(email: string, password: string): Promise<string | null> {
    const { state: login } = await ctx.logins.load(loginStreamId(email));
    if (login.status !== 'open') return null;
    const { state: account } = await ctx.accounts.load(accountStreamId(login.userId));
    if (account.status !== 'none' && account.status !== 'opened' && account.status !== 'named') return null;
    return (await ctx.passwords.verify(login.passwordHash, password)) ? login.userId : null;
  }

  route(
    app,
    api.identity.signupEmail,
    async ({ body }) => {
      const { state } = await ctx.logins.load(loginStreamId(body.email));
      if (state.status === 'open') throw new DomainError('email_not_unique', messages.emailNotUniqueSignup);
      return { email: body.email, message: 'email is unique- proceed to the password screen' };
    },
    opts,
  );

  route(
    app,
    api.identity.signupPassword,
    async ({ body, wrote }) => {
      let userId = newId();
      const passwordHash = await ctx.passwords.hash(body.password);
      try {
        // The login stream is the unique key: of two concurrent sign-ups with one e-mail, one appends first.
        await ctx.logins.handle(loginStreamId(body.email), { type: 'CreateLogin', userId, email: body.email, passwordHash, context: 'signup' }, meta(userId));
      } catch (error) {
        // The same person retrying this step (a timeout, a crash between the two appends) with the
        // same password resumes their sign-up; anyone else is told the address is taken.
        const resumed = await resumableSignUp(body.email, body.password);
        if (!resumed) throw error;
        userId = resumed;
      }
      const { state } = await ctx.accounts.load(accountStreamId(userId));
      if (state.status === 'none') {
        const opened = await ctx.accounts.handle(accountStreamId(userId), { type: 'OpenAccount', userId }, meta(userId));
        wrote(opened.positions, userId);
      }
      return { email: body.email, username: body.email, message: 'User has been created. proceed to the name screen.' };
    },
    opts,
  );

  route(
    app,
    api.identity.signupHandle,
    async ({ body, wrote }) => {
      const { userId, account } = await signingUp(body.email);
      if (account.status !== 'opened' && account.status !== 'named') throw new DomainError('account_not_created', 'the sign-up of this account is already complete');
      await ctx.handles.handle(handleStreamId(body.handle), { type: 'ClaimHandle', userId, handle: body.handle }, meta(userId));
      try {
        const named = await ctx.accounts.handle(accountStreamId(userId), { type: 'NameProfile', handle: body.handle, firstName: body.first_name, lastName: body.last_name }, meta(userId));
        wrote(named.positions, userId);
      } catch (error) {
        await ctx.handles.handle(handleStreamId(body.handle), { type: 'ReleaseHandle', userId }, meta(userId));
        throw error;
      }
      // Going back and choosing another handle frees the first one.
      if (account.status === 'named' && account.handle.toLowerCase() !== body.handle.toLowerCase()) {
        await ctx.handles.handle(handleStreamId(account.handle), { type: 'ReleaseHandle', userId }, meta(userId));
      }
      return { handle: body.handle, message: 'proceed to the picture screen' };
    },
    opts,
  );

  route(
    app,
    api.identity.signupPicture,
    async ({ body, wrote }) => {
      const { userId } = await signingUp(body.email);
      const profPic = body.profPic ? mediaPath(body.profPic.key) : '';
      const done = await ctx.accounts.handle(accountStreamId(userId), { type: 'CompleteSignUp', handle: body.handle, profPic, now: ctx.clock.now() }, meta(userId));
      wrote(done.positions, userId);
      return { email: body.email, handle: body.handle, message: 'Sign up complete- now show me the home page' };
    },
    opts,
  );

  route(
    app,
    api.identity.signupIncomplete,
    async ({ body, wrote }) => {
      const { state: login } = await ctx.logins.load(loginStreamId(body.email));
      if (login.status === 'open') {
        const { state: account } = await ctx.accounts.load(accountStreamId(login.userId));
        const abandoned = await ctx.accounts.handle(accountStreamId(login.userId), { type: 'AbandonSignUp' }, meta(login.userId));
        wrote(abandoned.positions);
        if (account.status === 'named') await ctx.handles.handle(handleStreamId(account.handle), { type: 'ReleaseHandle', userId: login.userId }, meta(login.userId));
        await ctx.logins.handle(loginStreamId(body.email), { type: 'CloseLogin', userId: login.userId, reason: 'sign-up-abandoned' }, meta(login.userId));
      }
      return { message: 'user data has been deleted' };
    },
    opts,
  );
}
