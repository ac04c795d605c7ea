// The embedded database belongs to one process. PGlite has no lock of its own: a second process
// opening the same directory (another `crm serve`, a `crm admin` or `crm migrate` beside a running
// server) would write beside the first, losing its changes or corrupting the files. So opening
// DATA_DIR's database first creates DATA_DIR/crm.pid exclusively (O_EXCL), holding the pid, the
// command and the start time; a second process finds it and stops at once, naming the holder. A
// file left by a process that died (its pid no longer runs) is stale and taken over. Operator
// commands reach a running server through its admin API instead (`crm admin ... --url`, README).
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const LOCK_FILE = 'crm.pid';
/** A lock file still empty this soon after its creation is being written, not stale. */
const FRESH_MS = 10_000;

interface Holder {
  pid: number;
  command: string;
  started_at: string;
}

/** Refused: another live process holds the directory. The message is the line to print. */
class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: Holder | null,
  ) {
    super(
      holder
        ? `DATA_DIR ${dataDir} is in use by pid ${holder.pid} (${holder.command}, started ${holder.started_at}); ` +
            'the embedded database serves one process: stop it first, or reach it through its admin API ' +
            '(crm admin ... --url)'
        : `DATA_DIR ${dataDir} is being opened by another process; try again`,
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  release(): void;
}

/** What the process is, for the message another one prints: `crm serve`, `crm admin set-org`... */
function commandOfProcess(): string {
  const [, script = 'node', ...args] = process.argv;
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-') || words.length === 2) break;
    words.push(arg);
  }
  const name = /cli[/\\](bin\.js|main\.ts)$/.test(script) ? 'crm' : basename(script);
  // Only command words: an option value (a password given to create-org) never reaches the file.
  return [name, ...words].join(' ');
}

function readHolder(file: string): Holder | null {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof value !== 'object' || value === null) return null;
    const pid = 'pid' in value ? value.pid : undefined;
    const command = 'command' in value ? value.command : undefined;
    const startedAt = 'started_at' in value ? value.started_at : undefined;
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return null;
    return {
      pid,
      command: typeof command === 'string' ? command : 'unknown command',
      started_at: typeof startedAt === 'string' ? startedAt : 'at an unknown time',
    };
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

function isRecent(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < FRESH_MS;
  } catch {
    return false;
  }
}

function errorCode(err: unknown): unknown {
  return err instanceof Error && 'code' in err ? err.code : undefined;
}

/**
 * Takes DATA_DIR for this process, or throws DataDirInUseError naming the process that has it.
 * `release` removes the file (only while it is still ours).
 */
export function lockDataDir(dataDir: string, command = commandOfProcess()): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
      const holder = readHolder(file);
      if (holder ? isRunning(holder.pid) : isRecent(file)) throw new DataDirInUseError(dir, holder);
      // Left by a process that is gone: taken over.
      try {
        unlinkSync(file);
      } catch (unlinkErr) {
        if (errorCode(unlinkErr) !== 'ENOENT') throw unlinkErr;
      }
      continue;
    }
    const holder: Holder = { pid: process.pid, command, started_at: new Date().toISOString() };
    try {
      writeSync(fd, `${JSON.stringify(holder)}\n`);
    } finally {
      closeSync(fd);
    }
    return {
      release() {
        if (readHolder(file)?.pid !== process.pid) return;
        try {
          unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      },
    };
  }
  throw new DataDirInUseError(dir, readHolder(file));
}
