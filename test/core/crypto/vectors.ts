/**
 * @module test/core/crypto/vectors
 * Loads the vendored standard vectors from `test/vectors` (provenance in each folder's
 * SOURCE.md). `MEMWARDEN_VECTORS_DIR` overrides the location. A missing file fails the test —
 * never a silent skip.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const VECTORS_DIR =
  process.env['MEMWARDEN_VECTORS_DIR'] ?? path.resolve(here, '../../vectors');

export function loadVectors<T>(rel: string): T {
  return JSON.parse(readFileSync(path.join(VECTORS_DIR, rel), 'utf8')) as T;
}

export function hex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'hex'));
}
