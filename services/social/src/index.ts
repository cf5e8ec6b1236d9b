export { buildSocialApp } from './app.ts';
export type { SocialDeps } from './context.ts';
export { socialModule } from './module.ts';
