import { defineConfig } from 'vitest/config';

// The scaffold test alone (test/scaffold.test.ts): it clones the repository, runs
// `npm run scaffold:area`, type-checks the copy and runs the central suites there, which takes
// minutes, so it is its own step of .ci/run (npm run test:scaffold) and skipped by the other suites.
export default defineConfig({
  test: {
    include: ['test/scaffold.test.ts'],
    env: { SCAFFOLD_TEST: '1' },
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
});
