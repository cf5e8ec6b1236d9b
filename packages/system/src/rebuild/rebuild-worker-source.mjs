// The rebuild worker's entry when the system runs from its TypeScript sources (tests, tsx): it
// registers tsx's loader in this thread, then loads the worker. The build bundles rebuild-worker.ts
// into dist/rebuild-worker.js, which needs none of this.
import { register } from 'tsx/esm/api';

register();
await import('./rebuild-worker.ts');
