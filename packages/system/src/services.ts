import { castiesModule } from '@castie/casties';
import { groupsModule } from '@castie/groups';
import { identityModule } from '@castie/identity';
import { notificationsModule } from '@castie/notifications';
import type { ServiceModule } from '@castie/platform';
import type { PasswordHasher } from '@castie/identity';
import { socialModule } from '@castie/social';

/** Every service of Castie, in the order they start. Add a service here to put it in the system. */
export function allServices(options: { passwords?: PasswordHasher } = {}): ServiceModule[] {
  return [identityModule(options), groupsModule(), castiesModule(), socialModule(), notificationsModule()];
}
