import { randomBytes } from 'node:crypto';

/** `bytes` random bytes as lowercase hex (default 5 bytes, 10 characters): for unique test names. */
export function randomHex(bytes = 5): string {
  return randomBytes(bytes).toString('hex');
}
