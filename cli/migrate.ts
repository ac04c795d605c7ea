// `crm migrate`: applies pending migrations, then exits.
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import { withDatabase } from './database.ts';
import { print, printHelp } from './output.ts';

const HELP = `Usage: crm migrate

Applies pending migrations to the database named by DATABASE_URL (or the embedded PGlite
database under DATA_DIR), then exits.`;

export async function migrateCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) return printHelp(HELP);
  const config = loadConfig();
  await withDatabase(async () => {});
  print(
    config.databaseUrl
      ? 'Migrations applied (PostgreSQL)'
      : `Migrations applied (embedded database under ${config.dataDir})`,
  );
  return 0;
}
