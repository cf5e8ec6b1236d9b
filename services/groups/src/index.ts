export { buildGroupsApp } from './app.ts';
export type { GroupsDeps } from './context.ts';
export { groupsModule, startGroupsReadModels } from './module.ts';
export { groupDecider, groupStreamId, type GroupCommand, type GroupState } from './administration/group-decider.ts';
export { membershipDecider, membershipStreamId, type GroupFacts, type MembershipCommand, type MembershipState } from './following/membership-decider.ts';
