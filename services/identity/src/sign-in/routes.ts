import { api, AuthenticateRequestSchema, errorStatus } from '@castie/contracts';
import { errorBody, route } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { accountStreamId, type IdentityContext } from '../context.ts';

/** Checking credentials (for the gateway) and the login endpoint. */
export function signInRoutes(app: FastifyInstance, ctx: IdentityContext): void {
  // Internal: the gateway asks who presented these credentials. Never routed from outside.
  app.post('/internal/authenticate', async (request, reply) => {
    const parsed = AuthenticateRequestSchema.safeParse(request.body);
    const user = parsed.success ? await ctx.verifier.verify(parsed.data.email, parsed.data.password) : null;
    if (!user) return reply.code(errorStatus.authentication_failed).send(errorBody('authentication_failed', 'invalid username or password'));
    return user;
  });

  route(
    app,
    api.identity.login,
    async ({ body, caller, wrote }) => {
      const signedIn = await ctx.accounts.handle(
        accountStreamId(caller.userId),
        { type: 'SignIn', lastSeenDate: body.last_seen_date, lastSeenTime: body.last_seen_time },
        { actor: caller.userId, now: ctx.clock.now() },
      );
      wrote(signedIn.positions);
      // Notification counts are kept by the notifications service, which is not built yet: until
      // it is, no notification exists, so the honest count is zero.
      return { profile_handle: caller.handle, number_notifications: 0, needs_answer: false, number_needing_answer: 0 };
    },
    { checkResponses: ctx.checkResponses },
  );
}
