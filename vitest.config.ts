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
    // Migrates one database for the run; each test file starts from a copy (test/helpers.ts).
    globalSetup: ['test/setup/database-template.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
