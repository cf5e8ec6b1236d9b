import type { Endpoint } from './endpoint.ts';
import { castiesApi } from './casties.ts';
import { groupsApi } from './groups.ts';
import { identityApi } from './identity.ts';
import { notificationsApi } from './notifications.ts';
import { socialApi } from './social.ts';

/** Every public endpoint, by service: the gateway's routing table. */
export const api = {
  identity: identityApi,
  groups: groupsApi,
  notifications: notificationsApi,
  social: socialApi,
  casties: castiesApi,
} as const;

export const allEndpoints: readonly Endpoint[] = Object.values(api).flatMap((service) => Object.values(service) as unknown as Endpoint[]);
