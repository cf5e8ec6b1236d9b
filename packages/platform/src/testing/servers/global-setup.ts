// Vitest's global setup for the workspace (vitest.config.ts): servers the whole run shares.
import { setupRedisForTestRun } from './redis.ts';

export default function setup(): Promise<() => Promise<void>> {
  return setupRedisForTestRun();
}
