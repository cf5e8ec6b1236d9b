import { z } from 'zod';
import { defineEventCatalog, type EventOf } from './catalog.ts';

/**
 * Topic `groups`, written only by the groups service.
 * Streams: `group-<slug>` (the group and who may administer or create in it) and
 * `membership-<slug>-<userId>` (one user's follow of one group: small streams, so a popular group
 * is no bottleneck).
 */
export const GROUPS_TOPIC = 'groups';

const userId = z.string().regex(/^[0-9a-f]{32}$/);
const slug = z.string().min(1);

export const groupEvents = defineEventCatalog(GROUPS_TOPIC, {
  GroupCreated: z.object({
    slug,
    groupName: z.string(),
    groupInfoText: z.string(),
    /** Relative path of the icon, '' when none. */
    groupIcon: z.string(),
    requiresApproval: z.boolean(),
    accessDeniedMessage: z.string(),
    /** Only named creators may create Casties (else every follower may). */
    restrictCreation: z.boolean(),
  }),
  /**
   * An operator changed the group's settings: only the fields that changed are present (at least
   * one). A new icon is already stored when this is appended.
   */
  GroupConfigured: z.object({
    slug,
    groupName: z.string().optional(),
    groupInfoText: z.string().optional(),
    groupIcon: z.string().optional(),
    requiresApproval: z.boolean().optional(),
    accessDeniedMessage: z.string().optional(),
    restrictCreation: z.boolean().optional(),
  }),
  GroupAdminNamed: z.object({ slug, userId }),
  GroupCreatorNamed: z.object({ slug, userId }),
  /** A public group: following at once. */
  GroupFollowed: z.object({ slug, userId }),
  /** An approval-required group: access is pending. */
  GroupAccessRequested: z.object({ slug, userId }),
  /** Pending access approved (by an operator or a group admin): now following, access granted. */
  GroupAccessGranted: z.object({ slug, userId, grantedBy: z.string() }),
  GroupAccessDenied: z.object({ slug, userId, deniedBy: z.string() }),
  GroupUnfollowed: z.object({ slug, userId }),
});
export type GroupEvent = EventOf<typeof groupEvents.schemas>;
