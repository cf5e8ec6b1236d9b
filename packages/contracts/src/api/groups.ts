import { z } from 'zod';
import { endpoint, ok } from './endpoint.ts';
import { instantPageQuery, listPageInfo, listPageQuery } from './paging.ts';
import { formBoolean, formInt, line, paragraph, text, textLimits, UploadRefSchema } from './form.ts';
import { FrodadSchema, HandleParams, profileResponse } from './people.ts';

/** A group slug: lowercase letters, digits and dashes (not starting or ending with a dash). */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const groupRules = { slugMax: 50, nameMax: 80, infoMax: textLimits.groupText, deniedMessageMax: textLimits.groupText, searchDefault: 100, searchMax: 500 } as const;

/** A slug as operators choose it at creation: validated, never normalised behind their back. */
export const SlugSchema = text().pipe(
  z.string().min(1, 'is required').max(groupRules.slugMax).regex(SLUG_PATTERN, 'must contain only lowercase letters, digits and dashes'),
);

/** Access of the requester to a group: granted (approved), pending (requested), or null. */
export const GroupAccessSchema = z.enum(['granted', 'pending']).nullable().meta({ id: 'GroupAccess' });
export type GroupAccess = z.infer<typeof GroupAccessSchema>;

/**
 * The Group object (spec: Resources), computed for one requester. Shared by the groups service
 * (listings, profile groups, follow) and the casties service (GET /api/groups/{slug}/ extends it
 * with ranking, totalRanked and the Casties; search lists it).
 */
export const GroupObjectSchema = z.object({
  slug: z.string(),
  groupName: z.string(),
  groupInfoText: z.string(),
  /** Relative location of the icon (`/media/…`), '' when none. */
  groupIcon: z.string(),
  requiresApproval: z.boolean(),
  accessDeniedMessage: z.string(),
  followersCount: z.number().int().nonnegative(),
  /** Followers who are the requester's frodads. */
  friendsCount: z.number().int().nonnegative(),
  /** Percent correct of the requester's forecasts on answered Casties of the group; null when none. */
  accuracy: z.number().int().min(0).max(100).nullable(),
  access: GroupAccessSchema,
  /** False while access is pending. */
  following: z.boolean(),
  canCreateCastie: z.boolean(),
  numberCasties: z.number().int().nonnegative(),
}).meta({ id: 'Group', description: 'The Group object, computed for the requester.' });
export type GroupObject = z.infer<typeof GroupObjectSchema>;

/** [groupName, slug] pairs, alphabetical by name (hamburger menu, create-Castie picker). */
export const GroupNamePairsSchema = z.array(z.tuple([z.string(), z.string()]));

/** Path parameter of the group endpoints (the spec calls it group_slug). */
export const GroupSlugParams = z.object({ group_slug: z.string().min(1) });
const GroupMemberParams = z.object({ group_slug: z.string().min(1), handle: z.string().min(1) });

/** The answer of follow, unfollow, approve, deny and grant: where the user now stands. */
const membershipResponse = ok({
  handle: z.string(),
  group_slug: z.string(),
  access: GroupAccessSchema,
  following: z.boolean(),
  /** Present when access was requested: "user has requested access to group". */
  access_pending: z.string().optional(),
  message: z.string().optional(),
});

/** A pending request to join an approval-required group, as its admins see it. */
export const GroupRequestSchema = z.object({
  handle: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  profPic: z.string(),
  /** When access was requested (service time zone). */
  requestedDate: z.string(),
  requestedTime: z.string(),
}).meta({ id: 'GroupRequest' });

export const groupsApi = {
  listGroups: endpoint({
    method: 'GET',
    paths: ['/api/groups/'],
    service: 'groups',
    access: 'user',
    query: z.object({ ...listPageQuery }),
    response: ok({ groups: z.record(z.string(), GroupObjectSchema), ...listPageInfo }),
  }),
  followers: endpoint({
    method: 'GET',
    paths: ['/api/groups/:group_slug/followers/'],
    service: 'groups',
    access: 'user',
    params: GroupSlugParams,
    query: z.object({ ...instantPageQuery }),
    response: ok({ followers: z.record(z.string(), FrodadSchema), ...listPageInfo }),
  }),
  friendFollowers: endpoint({
    method: 'GET',
    paths: ['/api/groups/:group_slug/followers/frodads/'],
    service: 'groups',
    access: 'user',
    params: GroupSlugParams,
    query: z.object({ ...instantPageQuery }),
    response: ok({ friendFollowers: z.record(z.string(), FrodadSchema), ...listPageInfo }),
  }),
  follow: endpoint({
    method: 'POST',
    paths: ['/api/groups/:group_slug/follow/'],
    service: 'groups',
    access: 'user',
    params: GroupSlugParams,
    response: membershipResponse,
  }),
  unfollow: endpoint({
    method: 'POST',
    paths: ['/api/groups/:group_slug/unfollow/'],
    service: 'groups',
    access: 'user',
    params: GroupSlugParams,
    response: membershipResponse,
  }),
  /** Pending requests of a group, oldest first; only its admins see them (404 for others). */
  requests: endpoint({
    method: 'GET',
    paths: ['/api/groups/:group_slug/requests/'],
    service: 'groups',
    access: 'user',
    params: GroupSlugParams,
    response: ok({ group_slug: z.string(), number_requests: z.number().int().nonnegative(), requests: z.array(GroupRequestSchema) }),
  }),
  approveRequest: endpoint({
    method: 'POST',
    paths: ['/api/groups/:group_slug/requests/:handle/approve/'],
    service: 'groups',
    access: 'user',
    params: GroupMemberParams,
    response: membershipResponse,
  }),
  denyRequest: endpoint({
    method: 'POST',
    paths: ['/api/groups/:group_slug/requests/:handle/deny/'],
    service: 'groups',
    access: 'user',
    params: GroupMemberParams,
    response: membershipResponse,
  }),
  /**
   * Groups whose name, slug or info text contains `q` (case-insensitive; empty `q`: every group).
   * The spec leaves them unordered; pages go by slug: `before` is the previous page's `next_before`.
   */
  searchGroups: endpoint({
    method: 'GET',
    paths: ['/api/search/groups/'],
    service: 'groups',
    access: 'user',
    query: z.object({
      q: line(textLimits.searchQuery),
      limit: formInt.pipe(z.number().min(1, 'must be at least 1').max(groupRules.searchMax, `must be at most ${groupRules.searchMax}`)).default(groupRules.searchDefault),
      before: z.string().optional(),
    }),
    response: ok({ search_results: z.record(z.string(), GroupObjectSchema), has_more: z.boolean(), next_before: z.string().nullable() }),
  }),
  createCastieGroups: endpoint({
    method: 'GET',
    paths: ['/api/casties/create/groups/'],
    service: 'groups',
    access: 'user',
    response: ok({ groups: GroupNamePairsSchema }),
  }),
  hamburger: endpoint({
    method: 'GET',
    paths: ['/api/hamburger/'],
    service: 'groups',
    access: 'user',
    response: ok({ handle: z.string(), groups: GroupNamePairsSchema }),
  }),
  profileGroups: endpoint({
    method: 'GET',
    paths: ['/api/profile/:handle/groups/'],
    service: 'groups',
    access: 'user',
    params: HandleParams,
    query: z.object({ slugs_only: formBoolean.optional(), ...instantPageQuery }),
    response: profileResponse('myGroups', z.union([z.record(z.string(), GroupObjectSchema), z.array(z.string())])).extend(listPageInfo),
  }),
} as const;

/** A group as operators see it: the Group object (for no requester) and its configuration. */
export const AdminGroupSchema = GroupObjectSchema.extend({
  restrictCreation: z.boolean(),
  /** Handles of the group admins and named creators. */
  admins: z.array(z.string()),
  creators: z.array(z.string()),
}).meta({ id: 'AdminGroup', description: 'A group as operators see it: the Group object (for no requester) and its configuration.' });

/**
 * The operators' API (decisions.md: Admin API). Not public: the gateway checks the bearer token
 * on /admin/ and forwards /admin/groups/* with `x-castie-admin: true`; these endpoints are
 * therefore not in the public routing table.
 */
export const groupsAdminApi = {
  createGroup: endpoint({
    method: 'POST',
    paths: ['/admin/groups/'],
    service: 'groups',
    access: 'none',
    uploads: ['groupIcon'],
    invalidAs: 'invalid_request',
    body: z.object({
      slug: SlugSchema,
      groupName: line(groupRules.nameMax).pipe(z.string().min(1, 'is required')),
      groupInfoText: paragraph(groupRules.infoMax),
      requiresApproval: formBoolean,
      accessDeniedMessage: paragraph(groupRules.deniedMessageMax),
      restrictCreation: formBoolean.optional(),
      groupIcon: UploadRefSchema.optional(),
    }),
    response: ok({ group: AdminGroupSchema }),
  }),
  /**
   * Changes an existing group's settings: any of what creation takes but the slug, at least one
   * (nothing sent: missing_request_data; nothing different from now: invalid_request). A new
   * `groupIcon` (multipart) replaces the old one, whose file is then deleted. Switching
   * `requiresApproval` off grants every pending request (`granted`: their handles).
   */
  configureGroup: endpoint({
    method: 'POST',
    paths: ['/admin/groups/:group_slug/'],
    service: 'groups',
    access: 'none',
    uploads: ['groupIcon'],
    invalidAs: 'invalid_request',
    params: GroupSlugParams,
    body: z.object({
      groupName: line(groupRules.nameMax).pipe(z.string().min(1, 'must not be empty')).optional(),
      groupInfoText: paragraph(groupRules.infoMax).optional(),
      requiresApproval: formBoolean.optional(),
      accessDeniedMessage: paragraph(groupRules.deniedMessageMax).optional(),
      restrictCreation: formBoolean.optional(),
      groupIcon: UploadRefSchema.optional(),
    }).meta({ minProperties: 1, description: 'At least one setting; only those sent change.' }),
    response: ok({ group: AdminGroupSchema, updated_fields: z.array(z.string()), granted: z.array(z.string()) }),
  }),
  /** Every group, alphabetical by slug, as operators see them. */
  listGroups: endpoint({
    method: 'GET',
    paths: ['/admin/groups/'],
    service: 'groups',
    access: 'none',
    response: ok({ groups: z.array(AdminGroupSchema) }),
  }),
  showGroup: endpoint({
    method: 'GET',
    paths: ['/admin/groups/:group_slug/'],
    service: 'groups',
    access: 'none',
    params: GroupSlugParams,
    response: ok({ group: AdminGroupSchema }),
  }),
  /** Pending requests to join approval-required groups, oldest first: of one group (`group`), or of all. */
  accessRequests: endpoint({
    method: 'GET',
    paths: ['/admin/access-requests/'],
    service: 'groups',
    access: 'none',
    query: z.object({ group: z.string().min(1).optional() }),
    response: ok({ number_requests: z.number().int().nonnegative(), requests: z.array(GroupRequestSchema.extend({ group_slug: z.string(), groupName: z.string() })) }),
  }),
  grantAccess: endpoint({
    method: 'POST',
    paths: ['/admin/groups/:group_slug/access/:handle/grant/'],
    service: 'groups',
    access: 'none',
    params: GroupMemberParams,
    response: membershipResponse,
  }),
  /** Refuses a pending request: the person no longer waits, and may ask again. */
  denyAccess: endpoint({
    method: 'POST',
    paths: ['/admin/groups/:group_slug/access/:handle/deny/'],
    service: 'groups',
    access: 'none',
    params: GroupMemberParams,
    response: membershipResponse,
  }),
  nameAdmin: endpoint({
    method: 'POST',
    paths: ['/admin/groups/:group_slug/admins/:handle/'],
    service: 'groups',
    access: 'none',
    params: GroupMemberParams,
    response: ok({ group: AdminGroupSchema }),
  }),
  nameCreator: endpoint({
    method: 'POST',
    paths: ['/admin/groups/:group_slug/creators/:handle/'],
    service: 'groups',
    access: 'none',
    params: GroupMemberParams,
    response: ok({ group: AdminGroupSchema }),
  }),
} as const;
