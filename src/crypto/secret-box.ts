import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import { asError, errnoCode } from '../errors';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../storage/private-dir';

/**
 * Authenticated encryption of secrets at rest (provider credentials): AES-256-GCM under the
 * server's master key, a fresh random 12-byte IV per value, the 16-byte tag checked on open.
 *
 * A sealed value is one printable string, the envelope
 *   `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts),
 * where the key id is a short fingerprint of the master key: opening a value sealed under another
 * key then fails with a message that says so, instead of a bare "unsupported state" from OpenSSL.
 * Callers may bind a value to its owner with associated data (e.g. the row id), so a sealed value
 * copied onto another row does not open there.
 */

export const MASTER_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';
const MASTER_KEY_FILE = 'master.key';

export const MASTER_KEY_FORMAT_HINT = `${MASTER_KEY_BYTES} bytes, given as base64 (44 characters) or hex (64 characters)`;

/** A problem opening a sealed value; its message never contains key material or plaintext. */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * Decodes a master key written as 64 hex characters or as base64/base64url of 32 bytes (padding
 * optional). Returns null for anything else; the caller words the error (never quoting the value).
 */
export function decodeMasterKey(text: string): Buffer | null {
  const value = text.trim();
  // Hex first: 64 hex characters are also valid base64, of the wrong length.
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(value) || /^[A-Za-z0-9_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value.replace(/=$/, ''), value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
    return key.length === MASTER_KEY_BYTES ? key : null;
  }
  return null;
}

export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== MASTER_KEY_BYTES) throw new SecretBoxError(`The master key must be ${MASTER_KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
    this.keyId = createHash('sha256').update('gateway-master-key-id:').update(this.key).digest('base64url').slice(0, 8);
  }

  seal(plaintext: string, associatedData = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, this.keyId, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(envelope: string, associatedData = ''): string {
    const parts = envelope.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretBoxError('Sealed value has an unknown format or version');
    const [, keyId, ivText, tagText, ciphertextText] = parts;
    if (keyId !== this.keyId) {
      throw new SecretBoxError(`Sealed value was encrypted under another master key (key id ${keyId}; this server's is ${this.keyId})`);
    }
    const iv = Buffer.from(ivText, 'base64url');
    const tag = Buffer.from(tagText, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('Sealed value is malformed');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('Sealed value failed authentication (tampered with, or bound to other data)');
    }
  }
}

/** What the services use of a SecretBox. */
export type Sealer = Pick<SecretBox, 'seal' | 'open'>;

export interface MasterKeySource {
  /** GATEWAY_MASTER_KEY, already checked for format by loadConfig. */
  masterKey: string | undefined;
  dataDir: string;
}

/**
 * The server's master key: GATEWAY_MASTER_KEY when set; otherwise the one in DATA_DIR/master.key,
 * generated there (mode 0600) on first start. Logs where the key came from, never the key.
 */
export function loadMasterKey(source: MasterKeySource, logger: Pick<Logger, 'info' | 'warn'>): Buffer {
  if (source.masterKey !== undefined) {
    const key = decodeMasterKey(source.masterKey);
    if (!key) throw new Error(`GATEWAY_MASTER_KEY is invalid: it must be ${MASTER_KEY_FORMAT_HINT}`);
    return key;
  }
  const file = path.join(source.dataDir, MASTER_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) {
    warnIfReadableByOthers(file, logger);
    logger.info({ path: file }, 'using the master key from DATA_DIR (GATEWAY_MASTER_KEY is not set)');
    return existing;
  }
  const created = createKeyFile(file);
  if (created.generated) {
    logger.warn(
      { path: file },
      'GATEWAY_MASTER_KEY is not set: generated a new master key into DATA_DIR. Stored credentials cannot be decrypted without it; back it up, or set GATEWAY_MASTER_KEY',
    );
  } else {
    logger.info({ path: file }, 'using the master key from DATA_DIR (GATEWAY_MASTER_KEY is not set)');
  }
  return created.key;
}

function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw new Error(`Cannot read the master key file ${file}: ${asError(err).message}`);
  }
  const key = decodeMasterKey(text);
  if (!key) throw new Error(`The master key file ${file} is invalid: it must hold ${MASTER_KEY_FORMAT_HINT}`);
  return key;
}

/**
 * Writes a fresh key to a private temporary file and links it into place: the link fails if
 * another process got there first (then its key is used), and no reader ever sees a partial file.
 */
function createKeyFile(file: string): { key: Buffer; generated: boolean } {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  const key = randomBytes(MASTER_KEY_BYTES);
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temp, key.toString('base64') + '\n', { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  try {
    fs.linkSync(temp, file);
    return { key, generated: true };
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    const theirs = readKeyFile(file);
    if (!theirs) throw err;
    return { key: theirs, generated: false };
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function warnIfReadableByOthers(file: string, logger: Pick<Logger, 'warn'>): void {
  if (process.platform === 'win32') return;
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) logger.warn({ path: file, mode: mode.toString(8) }, 'the master key file is readable by other users; chmod 600 it');
}
