import { hash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'gw_';

/** A new API key: 32 random bytes, URL-safe. Only its hash is stored. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256, hex; the one-shot `hash` (every request hashes its key) skips the Hash object `createHash` builds. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The visible start of a key, so an operator can tell keys apart without their secret. */
export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}
