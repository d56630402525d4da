import { defineConfig } from 'vitest/config';

/**
 * The fault suites (`npm run test:faults`): SIGKILL trials, tampering sweeps. Long-running, so
 * the main `npm test` leaves them out and CI runs them as their own step (.ci/run). One file
 * at a time: each spawns servers and databases of its own and the trials time kill moments.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // No test reads outside the repository (issue 24): see the file.
    setupFiles: ['test/setup/confine-reads.ts'],
    fileParallelism: false,
  },
});
