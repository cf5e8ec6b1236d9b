// The projections thread's entry when the system runs from its TypeScript sources (tests, tsx): it
// registers tsx's loader in this thread, then loads the thread. The build bundles worker.ts into
// dist/projections-thread.js, which needs none of this.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
