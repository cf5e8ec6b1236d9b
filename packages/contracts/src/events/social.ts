import { z } from 'zod';
import { defineEventCatalog, type EventOf } from './catalog.ts';

/**
 * Topic `social`, written only by the social service. Stream `frodads-<a>-<b>` with the two user
 * ids sorted, so both sides of a friendship share one stream and its optimistic concurrency.
 */
export const SOCIAL_TOPIC = 'social';

const userId = z.string().regex(/^[0-9a-f]{32}$/);

export const socialEvents = defineEventCatalog(SOCIAL_TOPIC, {
  FrodadRequested: z.object({ fromId: userId, toId: userId }),
  /** Both users are now frodads (friends). `fromId` sent the request, `toId` accepted it. */
  FrodadRequestAccepted: z.object({ fromId: userId, toId: userId }),
  FrodadRequestRejected: z.object({ fromId: userId, toId: userId }),
  /** The friendship ended; `byId` ended it. */
  FrodadRemoved: z.object({ byId: userId, otherId: userId }),
});
export type SocialEvent = EventOf<typeof socialEvents.schemas>;
