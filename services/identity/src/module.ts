import { IDENTITY_LOGINS_TOPIC, IDENTITY_TOPIC } from '@castie/contracts';
import type { ServiceModule } from '@castie/platform';
import { buildIdentityApp } from './app.ts';
import { argon2idHasher, type PasswordHasher } from './sign-in/passwords.ts';

/** Identity as the system composes it. Tests pass a cheaper hasher. */
export function identityModule(options: { passwords?: PasswordHasher } = {}): ServiceModule {
  return {
    name: 'identity',
    eventStores: [IDENTITY_TOPIC, IDENTITY_LOGINS_TOPIC],
    async build(deps) {
      const app = await buildIdentityApp({
        accounts: await deps.eventStore(IDENTITY_TOPIC),
        logins: await deps.eventStore(IDENTITY_LOGINS_TOPIC),
        clock: deps.clock,
        mailer: deps.mailer,
        passwords: options.passwords ?? argon2idHasher(),
        secret: deps.secret,
        cache: deps.cache,
        publicUrl: deps.publicUrl,
        checkResponses: deps.checkResponses,
        credentialCache: deps.metrics,
        ...(deps.logger ? { logger: deps.logger } : {}),
      });
      return { app, close: async () => {} };
    },
  };
}
