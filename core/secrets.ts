// Secrets at rest (SMTP passwords of connected accounts, provider tokens): AES-256-GCM, so a
// stored value is both confidential and tamper-evident. A stored secret reads
// `v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url parts). The key id names the key that encrypted
// it, which is what makes rotation possible: encryption always uses the current key (SECRETS_KEY,
// or the key generated into DATA_DIR/secrets-key), decryption accepts any key listed in
// SECRETS_KEY_PREVIOUS as well, so old values keep working until they are re-encrypted.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

const VERSION = 'v1';
const KEY_BYTES = 32;
/** 96-bit IVs, the size GCM is defined for; random per value (2^32 values per key stay far below the collision bound). */
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretKeys {
  /** Encrypts every new value. */
  current: Buffer;
  /** Accepted for decryption only. */
  previous: Buffer[];
}

export interface SecretBox {
  /**
   * Encrypts with the current key. `context` (e.g. `connected_accounts.smtp_password:<id>`) is
   * bound to the value as associated data: the value then decrypts only with the same context, so a
   * stored secret copied to another row or column is refused.
   */
  encryptSecret(plain: string, context?: string): string;
  /** Decrypts a value of encryptSecret; throws when it was altered, the key is unknown or the context differs. */
  decryptSecret(stored: string, context?: string): string;
  /** True when the value was encrypted with a previous key: decrypt and encrypt it again to finish a rotation. */
  needsRotation(stored: string): boolean;
}

/** A short public name of a key: 8 base64url characters of a hash, which tell nothing about the key. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('crm-secrets-key-id:').update(key).digest('base64url').slice(0, 8);
}

function checkKey(key: Buffer, what: string): Buffer {
  if (key.length !== KEY_BYTES) throw new Error(`${what} must be ${KEY_BYTES} bytes, got ${key.length}`);
  return key;
}

/** What the associated data covers: the format and key id (so the header cannot be relabelled) and the context. */
function associatedData(keyId: string, context: string | undefined): Buffer {
  return Buffer.from(`${VERSION}:${keyId}:${context ?? ''}`, 'utf8');
}

interface StoredParts {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

function splitStored(stored: string): StoredParts {
  const parts = stored.split(':');
  const [version, keyId, iv, tag, ciphertext] = parts;
  if (
    parts.length !== 5 ||
    version !== VERSION ||
    keyId === undefined ||
    iv === undefined ||
    tag === undefined ||
    ciphertext === undefined
  ) {
    throw new Error(`Not a stored secret: expected ${VERSION}:<keyId>:<iv>:<tag>:<ciphertext>`);
  }
  const decoded = {
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
    ciphertext: Buffer.from(ciphertext, 'base64url'),
  };
  if (decoded.iv.length !== IV_BYTES || decoded.tag.length !== TAG_BYTES) {
    throw new Error('Not a stored secret: the IV or tag has the wrong length');
  }
  return decoded;
}

export function createSecretBox(keys: SecretKeys): SecretBox {
  const current = checkKey(keys.current, 'The current secrets key');
  const currentId = secretKeyId(current);
  const byId = new Map<string, Buffer>([[currentId, current]]);
  for (const key of keys.previous) {
    const id = secretKeyId(checkKey(key, 'A previous secrets key'));
    if (!byId.has(id)) byId.set(id, key);
  }

  return {
    encryptSecret(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(associatedData(currentId, context));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, currentId, iv, tag, ciphertext]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join(':');
    },

    decryptSecret(stored, context) {
      const parts = splitStored(stored);
      const key = byId.get(parts.keyId);
      if (!key) {
        throw new Error(
          `The secret was encrypted with key ${parts.keyId}, which is neither SECRETS_KEY nor listed in SECRETS_KEY_PREVIOUS`,
        );
      }
      const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(parts.keyId, context));
      decipher.setAuthTag(parts.tag);
      try {
        return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8');
      } catch (err) {
        // GCM says only "unable to authenticate": the value, its tag or its context was changed.
        throw new Error(
          `The secret failed authentication with key ${parts.keyId}: altered, or another context`,
          {
            cause: err,
          },
        );
      }
    },

    needsRotation(stored) {
      return splitStored(stored).keyId !== currentId;
    },
  };
}

function readKeyFile(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new Error(`${file} does not hold a ${KEY_BYTES}-byte base64 key; restore it or set SECRETS_KEY`);
  }
  return key;
}

/**
 * The key in `<dataDir>/secrets-key`, generated on first use (mode 0600). Two processes starting
 * together agree on one key: each writes its own temporary file and hard-links it into place,
 * which fails for all but the first, and the others read the winner's key.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = join(dataDir, 'secrets-key');
  try {
    return readKeyFile(file);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'ENOENT')) throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const temporary = join(dataDir, `.secrets-key.${randomBytes(6).toString('hex')}.tmp`);
  writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  } finally {
    rmSync(temporary, { force: true });
  }
  return readKeyFile(file);
}

/**
 * A SecretBox whose keys are resolved at the first call, so processes that never touch a secret
 * (most tests, the CLI) never create a key file.
 */
export function createLazySecretBox(resolveKeys: () => SecretKeys): SecretBox {
  let box: SecretBox | undefined;
  const get = () => {
    box ??= createSecretBox(resolveKeys());
    return box;
  };
  return {
    encryptSecret: (plain, context) => get().encryptSecret(plain, context),
    decryptSecret: (stored, context) => get().decryptSecret(stored, context),
    needsRotation: (stored) => get().needsRotation(stored),
  };
}

/**
 * SECRETS_KEY when set; otherwise the key file in DATA_DIR, or a per-process key for in-memory
 * tests. Without SECRETS_KEY on PostgreSQL, every node must share that file: a warning says so.
 */
export function resolveSecretKeys(config: Config, persist: boolean, logger: Logger): SecretKeys {
  const previous = config.secretsPreviousKeys;
  if (config.secretsKey) return { current: config.secretsKey, previous };
  if (!persist) return { current: randomBytes(32), previous };
  if (config.databaseUrl) {
    logger.warn(
      { file: join(config.dataDir, 'secrets-key') },
      'SECRETS_KEY is not set: secrets at rest use the key file in DATA_DIR, which every node must share',
    );
  }
  return { current: loadOrCreateKeyFile(config.dataDir), previous };
}
