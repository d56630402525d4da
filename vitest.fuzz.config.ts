import { defineConfig } from 'vitest/config';

/**
 * `npm run fuzz`: the long runs, one file at a time — the coverage-guided parser targets
 * (test/fuzz/*.fuzz.ts, FUZZ_SECONDS per target, default 30) and the hostile-input / isolation
 * property suites at FUZZ_SCALE× their `npm test` run counts (default 10).
 */
export default defineConfig({
  test: {
    include: ['test/fuzz/**/*.fuzz.ts', 'test/fuzz/**/*.test.ts', 'test/isolation/**/*.test.ts'],
    pool: 'forks',
    // No test reads outside the repository (issue 24): see the file.
    setupFiles: ['test/setup/confine-reads.ts'],
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 300_000,
    env: {
      FUZZ_SCALE: process.env.FUZZ_SCALE ?? '10',
      FUZZ_SECONDS: process.env.FUZZ_SECONDS ?? '30',
    },
  },
});
