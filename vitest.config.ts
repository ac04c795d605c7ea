import { defineConfig } from 'vitest/config';

// The default suite: everything on the embedded default (PGlite in memory, in-process queue).
export default defineConfig({
  test: {
    include: [
      'test/**/*.test.ts',
      'core/**/*.test.ts',
      'tools/**/*.test.ts',
      'rest/**/*.test.ts',
      'mcp/**/*.test.ts',
      'workers/**/*.test.ts',
      'cli/**/*.test.ts',
    ],
    exclude: ['test/services/**', 'node_modules/**'],
    // Migrates one database for the run; each test file starts from a copy (test/fixtures/context.ts).
    globalSetup: ['test/setup/database-template.ts', 'test/setup/build.ts'],
    // Every statement the suite renders is also rendered by drizzle and compared (core/db/dialect.ts).
    setupFiles: ['test/setup/verify-sql.ts'],
    // Two files at a time on a 2-core machine (vitest's default is cores - 1), each worker keeping its
    // loaded modules and compiled PGlite between files: the test files share no module state (every
    // file builds its own app, services and database), so isolation per file only cost time (the
    // suite took 7.3 min isolated on one worker, 3.2 min like this).
    maxWorkers: 2,
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
