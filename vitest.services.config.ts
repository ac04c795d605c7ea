import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The services suite: the same tests against a real PostgreSQL server (a fresh database per test
// file) plus the tests under test/services that need PostgreSQL or Redis themselves.
export default defineConfig({
  test: {
    ...base.test,
    include: [...(base.test?.include ?? []), 'test/services/**/*.test.ts'],
    exclude: ['node_modules/**'],
    // Each file in its own module graph here: these files open real Redis and BullMQ connections,
    // and a connection an earlier file leaves closing must not surface in a later file that shares
    // the worker (seen once as an unattributable ioredis "Connection is closed").
    isolate: true,
    env: {
      TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
      TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    },
  },
});
