// Global setup of both suites: brings the JavaScript build (dist/, scripts/build.mjs) up to date
// once before any test runs, so the CLI tests' `crm` processes start from it instead of each
// finding a stale tree and rebuilding it side by side.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'ignore' });
}
