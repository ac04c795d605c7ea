// Global setup of both suites: migrate one database for the whole run, so each test file starts
// from a copy instead of running initdb and every migration itself. On PGlite the copy is an image
// of the migrated data directory in a temporary file; on PostgreSQL (TEST_DATABASE_URL) it is a
// template database that each file's scratch database is created from.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildPgliteImage, openDatabase } from '../../core/db/client.ts';
import { createDatabase } from '../support/postgres-admin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the migrated PGlite image (PGlite runs). */
    pgliteImagePath: string | undefined;
    /** Name of the migrated template database on the TEST_DATABASE_URL server (PostgreSQL runs). */
    templateDatabase: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = project.config.env?.TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const template = await createDatabase(adminUrl, 'crm_template');
    const db = await openDatabase({ url: template.url, poolMax: 1 });
    await db.migrate();
    await db.close();
    project.provide('templateDatabase', template.name);
    project.provide('pgliteImagePath', undefined);
    return template.drop;
  }
  const dir = await mkdtemp(join(tmpdir(), 'crm-test-db-'));
  const path = join(dir, 'migrated.tar');
  await writeFile(path, Buffer.from(await (await buildPgliteImage()).arrayBuffer()));
  project.provide('pgliteImagePath', path);
  project.provide('templateDatabase', undefined);
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
