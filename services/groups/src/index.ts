export { buildGroupsApp } from './app.ts';
export type { GroupsDeps } from './context.ts';
export { groupsModule, startGroupsReadModels } from './module.ts';
