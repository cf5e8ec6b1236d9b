import { createServiceApp } from '@castie/platform';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { identityContext, type IdentityDeps } from './context.ts';
import { passwordResetRoutes } from './password-reset/routes.ts';
import { preferencesRoutes } from './preferences/routes.ts';
import { profileRoutes } from './profile/routes.ts';
import { signInRoutes } from './sign-in/routes.ts';
import { signUpRoutes } from './sign-up/routes.ts';
import { supportRoutes } from './support/routes.ts';

/**
 * The identity service: accounts, sign-up, credentials, preferences, profile edits, password
 * reset, and the operators' account creation for support. It answers from its aggregates (a person's own data, always current), so it keeps no
 * read models of its own; it publishes `identity` events for the services that do.
 */
export async function buildIdentityApp(deps: IdentityDeps & { logger?: FastifyBaseLogger | boolean }): Promise<FastifyInstance> {
  const app = createServiceApp({ name: 'identity', logger: deps.logger });
  // The password reset pages post HTML forms.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const ctx = identityContext(deps);
  signUpRoutes(app, ctx);
  signInRoutes(app, ctx);
  preferencesRoutes(app, ctx);
  profileRoutes(app, ctx);
  passwordResetRoutes(app, ctx);
  supportRoutes(app, ctx);
  return app;
}
