import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The long fault trials run as their own step: `npm run test:faults` (vitest.faults.config.ts).
    exclude: ['test/faults/**', '**/node_modules/**'],
    testTimeout: 30_000,
    // Opening PGlite (WASM) in a hook takes seconds on a loaded 2-core machine.
    hookTimeout: 60_000,
    // expect.poll waits up to 1 s by default: a browser step behind a commit on a loaded 2-core
    // machine takes longer (the console test's review approval, issue 24). Polls wait longer;
    // what they assert is unchanged.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // No test reads outside the repository (issue 24): see the file.
    setupFiles: ['test/setup/confine-reads.ts'],
  },
});
