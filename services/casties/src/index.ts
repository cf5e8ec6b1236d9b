export { buildCastiesApp } from './app.ts';
export type { CastiesDeps } from './context.ts';
export { castiesModule, startCastiesReadModels } from './module.ts';
export { CASTIES_COLLECTIONS } from './read-model/projection.ts';
