// Locks in secrets at rest: AES-256-GCM round trips in the v1:<keyId>:<iv>:<tag>:<ct> format, refuses altered values, other keys and other contexts, rotates with SECRETS_KEY_PREVIOUS, validates the keys at config load without echoing them, and keeps a generated key file (0600) in DATA_DIR that later processes reuse.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { createSecretBox, loadOrCreateKeyFile, resolveSecretKeys, secretKeyId } from '../../core/secrets.ts';
import { createTestContext } from '../helpers.ts';

const dirs: string[] = [];
function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-secrets-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SMTP_PASSWORD = 'smtp-pässword: ✉ 42';

/** The stored value with one byte of its ciphertext flipped, re-encoded as it would sit in a column. */
function flipCiphertextByte(stored: string): string {
  const parts = stored.split(':');
  const ciphertext = Buffer.from(parts[4] ?? '', 'base64url');
  ciphertext[0] = (ciphertext[0] ?? 0) ^ 0x01;
  parts[4] = ciphertext.toString('base64url');
  return parts.join(':');
}

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = createSecretBox({ current: key, previous: [] });

  it('round-trips in the versioned format, with a fresh IV each time', () => {
    const stored = box.encryptSecret(SMTP_PASSWORD);
    const parts = stored.split(':');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toBe(secretKeyId(key));
    expect(parts[1]).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(Buffer.from(parts[2] ?? '', 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[3] ?? '', 'base64url')).toHaveLength(16);
    expect(stored).not.toContain('pässword');
    expect(box.decryptSecret(stored)).toBe(SMTP_PASSWORD);
    expect(box.encryptSecret(SMTP_PASSWORD)).not.toBe(stored);
    expect(box.decryptSecret(box.encryptSecret(''))).toBe('');
  });

  it('refuses a value with a flipped byte in its ciphertext, IV or tag', () => {
    const stored = box.encryptSecret(SMTP_PASSWORD);
    expect(() => box.decryptSecret(flipCiphertextByte(stored))).toThrow(/failed authentication/);
    for (const index of [2, 3]) {
      const parts = stored.split(':');
      const bytes = Buffer.from(parts[index] ?? '', 'base64url');
      bytes[5] = (bytes[5] ?? 0) ^ 0x80;
      parts[index] = bytes.toString('base64url');
      expect(() => box.decryptSecret(parts.join(':'))).toThrow(/failed authentication/);
    }
    expect(() => box.decryptSecret('plain text')).toThrow(/Not a stored secret/);
    expect(() => box.decryptSecret(stored.replace(/^v1:/, 'v2:'))).toThrow(/Not a stored secret/);
  });

  it('refuses another key, and a value moved to another context', () => {
    const stored = box.encryptSecret(SMTP_PASSWORD, 'connected_accounts.smtp_password:acct1');
    const other = createSecretBox({ current: randomBytes(32), previous: [] });
    expect(() => other.decryptSecret(stored, 'connected_accounts.smtp_password:acct1')).toThrow(
      new RegExp(`encrypted with key ${secretKeyId(key)}, which is neither SECRETS_KEY nor listed`),
    );
    // Relabelled with another key the box holds, the value fails: the key id is authenticated too.
    const second = randomBytes(32);
    const both = createSecretBox({ current: key, previous: [second] });
    const relabelled = stored.replace(secretKeyId(key), secretKeyId(second));
    expect(() => both.decryptSecret(relabelled, 'connected_accounts.smtp_password:acct1')).toThrow(
      /failed authentication/,
    );
    expect(() => box.decryptSecret(stored, 'connected_accounts.smtp_password:acct2')).toThrow(
      /failed authentication/,
    );
    expect(() => box.decryptSecret(stored)).toThrow(/failed authentication/);
    expect(box.decryptSecret(stored, 'connected_accounts.smtp_password:acct1')).toBe(SMTP_PASSWORD);
  });

  it('rotates: old values decrypt with the previous key listed, new ones use the current key', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createSecretBox({ current: oldKey, previous: [] }).encryptSecret(SMTP_PASSWORD);

    const withoutPrevious = createSecretBox({ current: newKey, previous: [] });
    expect(() => withoutPrevious.decryptSecret(before)).toThrow(/neither SECRETS_KEY/);

    const rotated = createSecretBox({ current: newKey, previous: [randomBytes(32), oldKey] });
    expect(rotated.decryptSecret(before)).toBe(SMTP_PASSWORD);
    expect(rotated.needsRotation(before)).toBe(true);
    const after = rotated.encryptSecret(rotated.decryptSecret(before));
    expect(after.split(':')[1]).toBe(secretKeyId(newKey));
    expect(rotated.needsRotation(after)).toBe(false);
    expect(withoutPrevious.decryptSecret(after)).toBe(SMTP_PASSWORD);
  });

  it('refuses a key of the wrong length', () => {
    expect(() => createSecretBox({ current: randomBytes(16), previous: [] })).toThrow(
      /must be 32 bytes, got 16/,
    );
    expect(() => createSecretBox({ current: key, previous: [randomBytes(31)] })).toThrow(
      /A previous secrets key must be 32 bytes/,
    );
  });
});

describe('keys from the configuration', () => {
  it('reads SECRETS_KEY and SECRETS_KEY_PREVIOUS as 32-byte base64 keys', () => {
    const current = randomBytes(32);
    const previous = [randomBytes(32), randomBytes(32)];
    const config = loadConfig({
      SECRETS_KEY: current.toString('base64'),
      SECRETS_KEY_PREVIOUS: `${previous[0]?.toString('base64url')}, ${previous[1]?.toString('base64')}`,
    });
    expect(config.secretsKey?.equals(current)).toBe(true);
    expect(config.secretsPreviousKeys.map((k) => k.toString('hex'))).toEqual(
      previous.map((k) => k.toString('hex')),
    );
    expect(loadConfig({}).secretsKey).toBeUndefined();
    expect(loadConfig({}).secretsPreviousKeys).toEqual([]);
  });

  it('refuses a key that is not 32 bytes, naming the variable and not the value', () => {
    const short = randomBytes(16).toString('base64');
    expect(() => loadConfig({ SECRETS_KEY: short })).toThrow(/SECRETS_KEY: 32 random bytes in base64/);
    expect(() => loadConfig({ SECRETS_KEY: 'correct horse battery staple correct horse b' })).toThrow(
      /SECRETS_KEY/,
    );
    const previous = `${randomBytes(32).toString('base64')},${short}`;
    let message = '';
    try {
      loadConfig({ SECRETS_KEY_PREVIOUS: previous });
    } catch (err) {
      message = err instanceof Error ? err.message : String(err);
    }
    expect(message).toMatch(/SECRETS_KEY_PREVIOUS: a comma-separated list of keys/);
    expect(message).not.toContain(short);
  });
});

describe('generated key file (embedded default)', () => {
  it('is created once with mode 0600 and reused by the next process', () => {
    const dir = join(scratchDir(), 'data');
    const first = loadOrCreateKeyFile(dir);
    const file = join(dir, 'secrets-key');
    expect(first).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first)).toBe(true);
    expect(loadOrCreateKeyFile(dir).equals(first)).toBe(true);
    expect(readdirSync(dir)).toEqual(['secrets-key']);
  });

  it('refuses a damaged key file instead of silently replacing it', () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'secrets-key'), 'too-short');
    expect(() => loadOrCreateKeyFile(dir)).toThrow(/secrets-key does not hold a 32-byte base64 key/);
  });

  it('is the key services use without SECRETS_KEY, kept across restarts; SECRETS_KEY then takes over with it as previous', () => {
    const dataDir = scratchDir();
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => lines.push(line) });
    const embedded = loadConfig({ DATA_DIR: dataDir });
    const stored = createSecretBox(resolveSecretKeys(embedded, true, logger)).encryptSecret(
      SMTP_PASSWORD,
      'ctx',
    );
    // A restart reads the same file.
    expect(createSecretBox(resolveSecretKeys(embedded, true, logger)).decryptSecret(stored, 'ctx')).toBe(
      SMTP_PASSWORD,
    );
    expect(lines).toEqual([]);

    const fileKey = readFileSync(join(dataDir, 'secrets-key'), 'utf8').trim();
    const newKey = randomBytes(32).toString('base64');
    const rotated = createSecretBox(
      resolveSecretKeys(
        loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: fileKey }),
        true,
        logger,
      ),
    );
    expect(rotated.decryptSecret(stored, 'ctx')).toBe(SMTP_PASSWORD);
    expect(rotated.needsRotation(stored)).toBe(true);
    expect(rotated.encryptSecret('x').split(':')[1]).toBe(secretKeyId(Buffer.from(newKey, 'base64')));

    // On PostgreSQL the file still works for one node, with a warning that nodes must share it.
    resolveSecretKeys(
      loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://db.example.com/crm' }),
      true,
      logger,
    );
    expect(lines.join('')).toContain('SECRETS_KEY is not set');
  });

  it('is not written by in-memory services, which use a key of their own', () => {
    const dataDir = scratchDir();
    const logger = createLogger('silent');
    const keys = resolveSecretKeys(loadConfig({ DATA_DIR: dataDir }), false, logger);
    expect(keys.current).toHaveLength(32);
    expect(
      resolveSecretKeys(loadConfig({ DATA_DIR: dataDir }), false, logger).current.equals(keys.current),
    ).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('services.secrets', () => {
  it('encrypts with SECRETS_KEY and decrypts what it encrypted', async () => {
    const key = randomBytes(32);
    const t = await createTestContext({ SECRETS_KEY: key.toString('base64') });
    try {
      const stored = t.services.secrets.encryptSecret(SMTP_PASSWORD, 'ctx');
      expect(stored.split(':')[1]).toBe(secretKeyId(key));
      expect(t.services.secrets.decryptSecret(stored, 'ctx')).toBe(SMTP_PASSWORD);
      expect(createSecretBox({ current: key, previous: [] }).decryptSecret(stored, 'ctx')).toBe(
        SMTP_PASSWORD,
      );
    } finally {
      await t.close();
    }
  });
});
