import { defineConfig } from 'vitest/config';

// One vitest run for the workspace. Files are named by level: *.unit.spec.ts, *.int.spec.ts,
// *.e2e.spec.ts; conformance suites live in packages/platform/src/testing and are called from adapter specs;
// whole-system tests live in packages/system (beside the harness that starts the system).
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.spec.ts', 'services/*/src/**/*.spec.ts', 'packages/*/test/**/*.spec.ts', 'services/*/test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One redis-server for the run, started and stopped by vitest's own process (see its comment).
    globalSetup: ['packages/platform/src/testing/servers/global-setup.ts'],
    // Two cores: more workers only add contention.
    maxWorkers: 2,
  },
});
