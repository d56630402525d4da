/**
 * @module core/entry/types
 * The versioned records memwarden signs: the memory entry and the tombstone (MemLineage §3.4).
 * Both are CBOR maps with text keys in core deterministic order (RFC 8949 §4.2.1); optional
 * fields are absent when unset, never `undefined` or null.
 */
import type { SourceTier, TrustLabel } from '../trust.js';
import type { JsonObject } from './meta.js';

/**
 * The signed body of a memory entry (everything but `sig`). Version 1 (ADR 0002) or version 2
 * (ADR 0048: version 1 plus the optional `evt`, `lid`, `meta`, `run` and `agent`, which a
 * version 1 record never carries; `./entry-v2.ts`).
 */
export interface EntryBody {
  /** Record discriminator; domain-separates entries from tombstones on the wire. */
  readonly t: 'entry';
  readonly v: 1 | 2;
  /** UUIDv7, canonical lowercase string; a 16-byte bstr on the wire. */
  readonly id: string;
  /** Namespace / principal scope, 1..256 code points. */
  readonly ns: string;
  /** Writer principal id `${kind}:${32 lowercase hex}`. */
  readonly writer: string;
  /** Signing key id, 16 lowercase hex. */
  readonly kid: string;
  /** Entry kind such as `fact`, `summary`, `tool_result`: 1..64 of [a-z_]. */
  readonly kind: string;
  /** UTF-8 text, at most 64 KiB encoded. */
  readonly content: string;
  readonly tier: SourceTier;
  readonly label: TrustLabel;
  /** SHA-256 of the original data blob (32 bytes). */
  readonly src: Uint8Array;
  /** SHA-256 of the write-time context (32 bytes). */
  readonly ctx: Uint8Array;
  /** Source URI, 1..2048 code points. */
  readonly uri?: string;
  /** Parent entry ids (UUIDv7), at most 64, no duplicates. */
  readonly parents: readonly string[];
  /** Edge weights in [0, 1], one per parent. */
  readonly weights: readonly number[];
  /** Write time, nanoseconds since the Unix epoch (uint64). */
  readonly ts: bigint;
  /** Expiry, nanoseconds (uint64, > ts). */
  readonly exp?: bigint;
  /** Reviewer principal id. */
  readonly rev?: string;
  /** Id of the entry this one supersedes (UUIDv7). */
  readonly sup?: string;
  /** 16 random bytes. */
  readonly nonce: Uint8Array;
  /** v2: when what the memory is about happened (event time), ns since the epoch (uint64). */
  readonly evt?: bigint;
  /** v2: the logical memory id this version belongs to (UUIDv7; only with `sup`). */
  readonly lid?: string;
  /** v2: caller metadata, a non-empty JSON object (`./meta.ts`). */
  readonly meta?: JsonObject;
  /** v2: the run / session scope within the principal, 1..256 code points. */
  readonly run?: string;
  /** v2: the agent scope within the principal, 1..256 code points. */
  readonly agent?: string;
}

/** A signed entry: the body plus its 64-byte Ed25519 signature. */
export type SignedEntry = EntryBody & { readonly sig: Uint8Array };

/** The signed body of a tombstone: the deletion of entry `target` (MemLineage §3.4). */
export interface TombstoneBody {
  readonly t: 'tombstone';
  readonly v: 1;
  /** UUIDv7 of the tombstone itself. */
  readonly id: string;
  /** Id of the deleted entry (UUIDv7). */
  readonly target: string;
  /** Why, 1..1024 code points. */
  readonly reason: string;
  readonly writer: string;
  readonly kid: string;
  readonly ts: bigint;
  readonly nonce: Uint8Array;
}

/** A signed tombstone. */
export type SignedTombstone = TombstoneBody & { readonly sig: Uint8Array };

/**
 * The base record version (CONVENTIONS: a change is a new version). Entries without any
 * version 2 field are written as version 1; {@link RECORD_VERSION_2} adds fields (ADR 0048).
 */
export const RECORD_VERSION = 1;
/** The entry record version with event time, logical id, metadata and scopes (ADR 0048). */
export const RECORD_VERSION_2 = 2;

/** Field limits, shared by validation and the decoders. */
export const LIMITS = {
  nsChars: 256,
  kindChars: 64,
  contentBytes: 64 * 1024,
  uriChars: 2048,
  reasonChars: 1024,
  parents: 64,
  /** Upper bound on any encoded entry: checked before parsing (CODEC_OVERSIZE). */
  entryBytes: 96 * 1024,
  /** Upper bound on any encoded tombstone. */
  tombstoneBytes: 8 * 1024,
} as const;

/**
 * Entry map keys in core deterministic order (RFC 8949 §4.2.1: bytewise order of the encoded
 * keys; for short text keys that is shorter first, then lexicographic). `sig` is present only
 * in the signed record.
 */
export const ENTRY_KEYS = [
  't',
  'v',
  'id',
  'ns',
  'ts',
  'ctx',
  'exp',
  'kid',
  'rev',
  'sig',
  'src',
  'sup',
  'uri',
  'kind',
  'tier',
  'label',
  'nonce',
  'writer',
  'content',
  'parents',
  'weights',
] as const;

/** Tombstone map keys in core deterministic order. */
export const TOMBSTONE_KEYS = [
  't',
  'v',
  'id',
  'ts',
  'kid',
  'sig',
  'nonce',
  'reason',
  'target',
  'writer',
] as const;
