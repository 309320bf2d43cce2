// API keys: random, recognizable by their prefix, shown once, stored only as a SHA-256 hash.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'wrs_';

/** 192 random bits, base64url, after a prefix that tells what the secret is for. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** What is kept of a key besides its hash, to tell keys apart in lists: wrs_ and 6 more. */
export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The key from an Authorization header: the key itself, or "Bearer <key>". */
export function keyFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  const key = match ? match[1] : value;
  // Keys are short; anything long or with spaces is not one (and is not hashed at length).
  if (!key || key.length > 256 || /\s/.test(key)) return undefined;
  return key;
}
