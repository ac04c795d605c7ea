// Reading a PDF back as text with poppler's pdftotext, as the PDF tests do. poppler-utils is a
// Debian package: .ci/run installs it, so CI always reads the PDFs back; on a machine without it
// the tests that need it are skipped (vitest lists them as skipped), never passed.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function popplerInstalled(): boolean {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when pdftotext (and the rest of poppler-utils) can run here. */
export const hasPoppler = popplerInstalled();

/** The text of a PDF as `pdftotext -layout` lays it out. */
export async function pdfText(bytes: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'crm-pdf-text-'));
  try {
    const path = join(dir, 'document.pdf');
    await writeFile(path, bytes);
    const { stdout } = await run('pdftotext', ['-layout', path, '-']);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
