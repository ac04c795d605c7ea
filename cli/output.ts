// What every `crm` command shares for its output: lines on stdout, JSON, and a failure as one line
// (`crm: <message>` is written by cli/main.ts), with input field names turned into the flags the
// user typed.
import { AppError } from '../core/errors.ts';
import { CliError, rootMessage } from './remote.ts';

export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}

export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Prints a command's help text; a command asked for --help exits 0. */
export function printHelp(text: string): number {
  print(text);
  return 0;
}

/** One line describing a failure; AppError field names become the flags that carry them. */
export function describeError(err: unknown, flags: Record<string, string> = {}): string {
  let text: string;
  if (err instanceof CliError) {
    text = err.message;
  } else if (err instanceof AppError) {
    text = err.body.message ?? err.body.error;
    if (err.body.details?.length) {
      const details = err.body.details.map((d) => `${flags[d.field] ?? d.field}: ${d.message}`);
      text = `${text}: ${details.join('; ')}`;
    }
  } else if (err instanceof Error) {
    text = rootMessage(err);
  } else {
    text = String(err);
  }
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Runs `fn`, renaming input field names in a validation failure to the flags the user typed. */
export async function withFlags<T>(flags: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new CliError(describeError(err, flags), { cause: err });
  }
}
