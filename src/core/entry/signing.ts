/**
 * @module core/entry/signing
 * What gets signed and what goes into the log for each record type.
 *
 * Signatures cover `domain ‖ body bytes`, with a distinct domain string per record type and
 * version, so a signature over one can never be replayed as the other (domain separation).
 * Log leaves follow MemLineage §3.4: an entry leaf commits `id ‖ sig`; a tombstone leaf is
 * prefixed `ts:` and commits the target, its own id and its signature.
 */
import { concatBytes } from '../bytes.js';
import { parseUuid } from './uuidv7.js';
import { checkBytes } from './fields.js';
import type { SignedEntry, SignedTombstone } from './types.js';

const enc = new TextEncoder();
/** Signing domain of entry bodies, version 1. */
export const ENTRY_SIGNING_DOMAIN: Uint8Array = enc.encode('memwarden/entry/v1\n');
/** Signing domain of tombstone bodies, version 1. */
export const TOMBSTONE_SIGNING_DOMAIN: Uint8Array = enc.encode('memwarden/tombstone/v1\n');
const TOMBSTONE_LEAF_PREFIX = enc.encode('ts:');

/** The bytes an entry signature covers: utf8("memwarden/entry/v1\n") ‖ `encodeEntryBody(body)`. */
export function signingInput(bodyBytes: Uint8Array): Uint8Array {
  return concatBytes(ENTRY_SIGNING_DOMAIN, bodyBytes);
}

/** The bytes a tombstone signature covers: utf8("memwarden/tombstone/v1\n") ‖ `encodeTombstoneBody(body)`. */
export function tombstoneSigningInput(bodyBytes: Uint8Array): Uint8Array {
  return concatBytes(TOMBSTONE_SIGNING_DOMAIN, bodyBytes);
}

/** Log leaf data of an entry (MemLineage §3.4): 16-byte id ‖ 64-byte signature (80 bytes). */
export function entryLeafData(entry: Pick<SignedEntry, 'id' | 'sig'>): Uint8Array {
  return concatBytes(parseUuid(entry.id), checkBytes(entry.sig, 64, 'sig'));
}

/**
 * Log leaf data of a tombstone (MemLineage §3.4): utf8("ts:") ‖ 16-byte target id ‖ 16-byte
 * tombstone id ‖ 64-byte signature (99 bytes). The prefix keeps it apart from any entry leaf.
 */
export function tombstoneLeafData(t: Pick<SignedTombstone, 'id' | 'target' | 'sig'>): Uint8Array {
  return concatBytes(
    TOMBSTONE_LEAF_PREFIX,
    parseUuid(t.target),
    parseUuid(t.id),
    checkBytes(t.sig, 64, 'sig'),
  );
}
