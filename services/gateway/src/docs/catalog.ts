/*
 * What the contracts do not say about each operation: its stable operationId (where the contract's
 * key alone would be vague), a one-line summary, and the error statuses it really answers beyond
 * the ones every operation of its kind has (see `errorStatuses` in openapi.ts). The whole-system
 * docs session (packages/system/src/e2e/docs) fails when a documented status is never produced or
 * an undocumented one is.
 */

/** Contract keys whose operationId would not explain itself. */
export const operationIds: Record<string, string> = {
  'notifications.list': 'listNotifications',
  'notifications.initialize': 'initialize',
  'notifications.login': 'login',
  'casties.detail': 'getCastie',
  'casties.forecast': 'createForecast',
  'casties.answerView': 'getAnswerForm',
  'casties.answer': 'answerCastie',
  'casties.comments': 'listComments',
  'casties.comment': 'createComment',
  'casties.group': 'getGroup',
  'casties.stats': 'profileStats',
  'casties.myCasties': 'profileCasties',
  'groups.requests': 'listGroupRequests',
  'groups.approveRequest': 'approveGroupRequest',
  'groups.denyRequest': 'denyGroupRequest',
  'groups.followers': 'listFollowers',
  'groups.friendFollowers': 'listFriendFollowers',
  'groups.follow': 'followGroup',
  'groups.unfollow': 'unfollowGroup',
  'groups.hamburger': 'hamburgerMenu',
  'social.frodadRequests': 'listFrodadRequests',
};

export const summaries: Record<string, string> = {
  signupEmail: 'Sign-up step 1: check that an e-mail address is free',
  signupPassword: 'Sign-up step 2: create the account with a password',
  signupHandle: 'Sign-up step 3: choose the handle and names',
  signupPicture: 'Sign-up step 4: add an optional profile picture and complete the account',
  signupIncomplete: 'Abandon a sign-up and delete its data',
  getPreferences: 'Read the privacy preference',
  setPreferences: 'Change the privacy preference',
  getEmail: 'Read the e-mail address (username)',
  setEmail: 'Change the e-mail address (username)',
  getPassword: 'Read a masked form of the password',
  setPassword: 'Change the password',
  getProfileEdit: 'Read the editable profile fields',
  editProfile: 'Edit the profile (handle, names, place, picture)',
  deleteAccount: 'Delete the own account',
  listGroups: 'List every group',
  listFollowers: 'List the followers of a group',
  listFriendFollowers: 'List the followers of a group who are frodads of the requester',
  followGroup: 'Follow a group (or ask for access)',
  unfollowGroup: 'Unfollow a group',
  listGroupRequests: 'List pending access requests of a group (its admins only)',
  approveGroupRequest: 'Approve a pending access request (group admins only)',
  denyGroupRequest: 'Deny a pending access request (group admins only)',
  searchGroups: 'Search groups',
  createCastieGroups: 'List the groups the requester may create Casties in',
  hamburgerMenu: 'Handle and followed groups for the menu',
  profileGroups: 'Groups a profile follows',
  listNotifications: 'List notifications (marks them read)',
  initialize: 'Counts of new notifications and Casties needing an answer',
  notificationStream: 'Live notification counts (Server-Sent Events)',
  notificationStreamToken: 'A short-lived token that opens live notification streams',
  login: 'Record a sign-in and count notifications since a moment',
  addFrodad: 'Send a frodad (friend) request',
  listFrodadRequests: 'List received and sent frodad requests',
  respondToFrodadRequest: 'Accept or reject a frodad request',
  unfrodad: 'End a frodadship',
  searchPeople: 'Search people',
  profileFrodads: 'Frodads of a profile',
  createCastie: 'Create a Castie',
  needsAnswer: 'Count own Casties waiting for their answer',
  getCastie: 'Read a Castie in detail',
  createForecast: 'Forecast a Castie',
  getAnswerForm: 'Read what answering a Castie needs',
  answerCastie: 'Enter the correct answer of an own Castie',
  listComments: 'List the comments of a Castie',
  createComment: 'Comment on a Castie',
  deleteComment: 'Delete an own comment',
  reportCastie: 'Report a Castie',
  reportComment: 'Report a comment (hides it from the reporter)',
  home: 'Home feed, following tab',
  homeTab: 'Home feed of one tab',
  searchCasties: 'Search Casties',
  profileCasties: 'Casties a profile created',
  profileStats: 'Forecasts of a profile',
  getGroup: 'Read a group with its Casties and the requester’s ranking',
  groupAccuracy: 'The requester’s accuracy and forecasts in a group',
  leaderboard: 'Overall leaderboard',
  groupLeaderboard: 'Leaderboard of a group',
  adminCreateGroup: 'Create a group',
  adminListGroups: 'List every group with its configuration',
  adminShowGroup: 'Read one group with its configuration',
  adminAccessRequests: 'List pending access requests (of one group or all)',
  adminGrantAccess: 'Grant a pending access request',
  adminDenyAccess: 'Deny a pending access request',
  adminNameAdmin: 'Name a group admin',
  adminNameCreator: 'Name a Castie creator of a group',
  adminCreateAccount: 'Create a complete account for someone',
  adminAdvanceClock: 'Move the service clock forward (CLOCK=manual only)',
  passwordResetPage: 'Password reset: the page asking for an e-mail address',
  passwordResetRequest: 'Password reset: send a reset link by e-mail',
  passwordResetLinkPage: 'Password reset: the page of a reset link',
  passwordResetChoose: 'Password reset: choose the new password',
  getMedia: 'A stored picture (profile picture or group icon)',
  ownDataExport: 'Export all of one’s own data (JSON, or a zip of CSV files)',
  healthz: 'Liveness: the process is up',
  readyz: 'Readiness: read models caught up and dependencies answer',
  metrics: 'Prometheus metrics',
  docsPage: 'The interactive API reference (HTML)',
  openApiDocument: 'This OpenAPI document',
};

/** Admin read-model operations, per service (summaries are built from these). */
export const readModelOperationSummaries: Record<string, string> = {
  state: 'State of the {service} read models',
  rebuild: 'Rebuild the {service} read models from the log',
  deadLetters: 'List the {service} dead letters',
  replay: 'Replay one {service} dead letter',
};

/**
 * Statuses an operation answers beyond the defaults (400 when it takes input, 401/429 by its
 * access, 404 when it has path parameters), and defaults it never answers.
 */
export const statusAdjustments: Record<string, { add?: number[]; remove?: number[] }> = {
  // Refusals of the domain with no input to validate.
  followGroup: { add: [400] },
  unfollowGroup: { add: [400] },
  addFrodad: { add: [400] },
  unfrodad: { add: [400] },
  deleteComment: { add: [400] },
  // The spec answers an unknown account with 400 object_not_found.
  deleteAccount: { add: [400], remove: [404] },
  // A tab outside the enum is a malformed parameter (400), never an unknown object.
  homeTab: { remove: [404] },
  // Only one's own profile is editable: another handle is not_allowed (400), known or not.
  getProfileEdit: { add: [400], remove: [404] },
  answerCastie: { add: [400] },
  adminGrantAccess: { add: [400] },
  adminDenyAccess: { add: [400] },
  adminReplay: { add: [400] },
};
