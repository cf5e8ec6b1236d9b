export { buildSocialApp } from './app.ts';
export type { SocialDeps } from './context.ts';
export { socialModule } from './module.ts';
export { friendshipDecider, frodadsStreamId, type FriendshipCommand, type FriendshipState } from './frodads/decider.ts';
