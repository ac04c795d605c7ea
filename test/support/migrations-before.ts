// A copy of the migrations folder whose journal stops before the first migration `isCut` names, for
// a test that migrates a database to the state before a migration, writes rows the old schema
// holds, then runs the rest and checks what the migration carried over.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const MIGRATIONS = fileURLToPath(new URL('../../core/db/migrations', import.meta.url));

const journalSchema = z
  .object({ entries: z.array(z.object({ tag: z.string() }).passthrough()) })
  .passthrough();

/** The folder (under `dir`) holding every migration before the first whose tag `isCut` accepts. */
export function migrationsBefore(dir: string, isCut: (tag: string) => boolean): string {
  const before = join(dir, 'migrations');
  cpSync(MIGRATIONS, before, { recursive: true });
  const journalPath = join(before, 'meta', '_journal.json');
  const journal = journalSchema.parse(JSON.parse(readFileSync(journalPath, 'utf8')));
  const cut = journal.entries.findIndex((e) => isCut(e.tag));
  if (cut <= 0) throw new Error('no migration to stop before');
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, cut) }));
  return before;
}
