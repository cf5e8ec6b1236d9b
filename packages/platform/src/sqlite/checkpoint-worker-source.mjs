// The checkpoint thread's entry when the system runs from its TypeScript sources (tests, tsx): it
// registers tsx's loader in this thread, then loads the worker. The build bundles
// checkpoint-worker.ts into dist/sqlite-checkpoints.js, which needs none of this.
import { register } from 'tsx/esm/api';

register();
await import('./checkpoint-worker.ts');
