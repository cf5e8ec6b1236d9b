import { AuthenticateRequestSchema, errorStatus } from '@castie/contracts';
import { errorBody } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { IdentityContext } from '../context.ts';

/** Checking credentials, for the gateway (POST /api/login/ is the notifications service's). */
export function signInRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'verifier'>): void {
  // Internal: the gateway asks who presented these credentials. Never routed from outside.
  app.post('/internal/authenticate', async (request, reply) => {
    const parsed = AuthenticateRequestSchema.safeParse(request.body);
    const verified = parsed.success ? await ctx.verifier.verify(parsed.data.email, parsed.data.password) : null;
    if (!verified) return reply.code(errorStatus.authentication_failed).send(errorBody('authentication_failed', 'invalid username or password'));
    return verified;
  });

}
