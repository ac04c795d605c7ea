// A PgBouncer of the test's own in front of the test server: transaction pooling with the pool size
// the test needs (one server connection shared by every client, to prove nothing of one transaction
// reaches the next), on a free port, stopped by the test. CI installs the binary (.ci/run); the
// suite's own PgBouncer (.ci/pgbouncer.ini) has a pool per database that a test cannot shrink.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { exitOf, freePort } from './cli.ts';

/** Whether a `pgbouncer` binary is on the PATH. */
export function hasPgbouncer(): boolean {
  try {
    execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestPgbouncer {
  /** `directUrl` (a database of the server behind) reached through this PgBouncer. */
  urlOf(directUrl: string): string;
  stop(): Promise<void>;
}

/** Starts PgBouncer in front of the server of `serverUrl`, with `poolSize` server connections per database. */
export async function startPgbouncer(serverUrl: string, poolSize: number): Promise<TestPgbouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const dir = await mkdtemp(join(tmpdir(), 'crm-pgbouncer-'));
  // PgBouncer refuses to run as root: it then runs as the postgres user, who must read these files.
  await chmod(dir, 0o755);
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), ini], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const urlOf = (directUrl: string) => {
    const url = new URL(directUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = exitOf(child);
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) break;
    const probe = new pg.Client({ connectionString: urlOf(serverUrl) });
    const up = await probe.connect().then(
      () => true,
      () => false,
    );
    await probe.end().catch(() => undefined);
    if (up) return { urlOf, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  throw new Error(`PgBouncer did not start: ${log}`);
}
