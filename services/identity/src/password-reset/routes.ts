import { DomainError, PasswordResetEmailFormSchema as EmailForm, PasswordResetFormSchema as PasswordForm, PasswordResetTokenParams as TokenParams } from '@castie/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createHash, randomBytes } from 'node:crypto';
import { loginStreamId, type IdentityContext } from '../context.ts';
import { page } from './pages.ts';

const LINK_LIFETIME_MS = 60 * 60_000;
const resetStreamId = (token: string) => `reset-${createHash('sha256').update(token).digest('hex')}`;

/**
 * Password reset in a browser (spec: {base_url}/password_reset/): ask for a link by e-mail, open
 * it, choose a new password. The answer to "send me a link" never tells whether an account exists.
 */
export function passwordResetRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'clock' | 'logins' | 'mailer' | 'passwords' | 'publicUrl' | 'resets'>): void {
  const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').send(body);

  app.get('/password_reset/', async (_request, reply) => html(reply, 200, page.askForLink()));

  app.post('/password_reset/', async (request, reply) => {
    const form = EmailForm.safeParse(request.body);
    if (!form.success) return html(reply, 400, page.askForLink('Enter the e-mail address of your account.'));
    const email = form.data.email;
    const { state: login } = await ctx.logins.load(loginStreamId(email));
    if (login.status === 'open') {
      const token = randomBytes(32).toString('base64url');
      const now = ctx.clock.now();
      await ctx.resets.handle(resetStreamId(token), { type: 'IssueReset', userId: login.userId, email, expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS) }, { actor: login.userId, now });
      const link = `${ctx.publicUrl}/password_reset/${token}/`;
      await ctx.mailer.send({
        to: email,
        subject: 'Reset your Castie password',
        text: `Someone asked to reset the password of your Castie account.\n\nOpen this link within an hour to choose a new password:\n${link}\n\nIf it was not you, ignore this e-mail: your password stays as it is.`,
      });
    }
    return html(reply, 200, page.linkSent());
  });

  app.get('/password_reset/:token/', async (request, reply) => {
    const params = TokenParams.safeParse(request.params);
    const { state } = params.success ? await ctx.resets.load(resetStreamId(params.data.token)) : { state: { status: 'none' as const } };
    const valid = state.status === 'issued' && Date.parse(state.expiresAt) > ctx.clock.now().getTime();
    return valid ? html(reply, 200, page.choosePassword()) : html(reply, 400, page.invalidLink());
  });

  app.post('/password_reset/:token/', async (request, reply) => {
    const params = TokenParams.safeParse(request.params);
    if (!params.success) return html(reply, 400, page.invalidLink());
    const form = PasswordForm.safeParse(request.body);
    if (!form.success) return html(reply, 400, page.choosePassword('The password needs at least 4 characters.'));
    if (form.data.password !== form.data.password_confirm) return html(reply, 400, page.choosePassword('The two passwords differ.'));
    const now = ctx.clock.now();
    try {
      const used = await ctx.resets.handle(resetStreamId(params.data.token), { type: 'UseReset', now }, { actor: 'system', now });
      if (used.state.status !== 'used') return html(reply, 400, page.invalidLink());
      const { userId, email } = used.state;
      const passwordHash = await ctx.passwords.hash(form.data.password);
      await ctx.logins.handle(loginStreamId(email), { type: 'ChangePassword', userId, passwordHash }, { actor: userId, now });
    } catch (error) {
      // A link that expired, was used already, or whose login was closed since.
      if (error instanceof DomainError) return html(reply, 400, page.invalidLink());
      throw error;
    }
    return html(reply, 200, page.passwordChanged());
  });
}

