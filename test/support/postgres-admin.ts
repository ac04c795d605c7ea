// One statement on the test server's admin connection (create or drop a scratch or template
// database), on a short-lived client so no session stays connected to the database it names.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

async function runAdminSql(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the server of `adminUrl`. */
function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `url` reached through the pooler of `poolerUrl` (its host, port and user; the database kept). */
export function throughPooler(url: string, poolerUrl: string): string {
  const pooled = new URL(poolerUrl);
  pooled.pathname = new URL(url).pathname;
  return pooled.toString();
}

/**
 * Creates a database named `<prefix>_<random>` (a copy of `template` when given) and returns its URL
 * and a function that drops it. Tests, the benchmarks and the global setup all make theirs here.
 */
export async function createDatabase(
  adminUrl: string,
  prefix: string,
  template?: string,
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await runAdminSql(
    adminUrl,
    template ? `create database ${name} template ${template}` : `create database ${name}`,
  );
  return {
    name,
    url: databaseUrl(adminUrl, name),
    drop: () => runAdminSql(adminUrl, `drop database if exists ${name} with (force)`),
  };
}
