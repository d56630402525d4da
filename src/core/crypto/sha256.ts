/**
 * @module core/crypto/sha256
 * SHA-256 through Node's native one-shot `crypto.hash` (OpenSSL), the fastest path from JS.
 */
import { hash } from 'node:crypto';

/** SHA-256 of `data` as a fresh 32-byte array. */
export function sha256(data: Uint8Array): Uint8Array {
  const out = hash('sha256', data, 'buffer') as Buffer;
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
