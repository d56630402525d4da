/**
 * @module memory/records
 * The JSON view of a verified entry (`MemoryRecord`) and of proofs and checkpoints.
 */
import { toBase64 } from '../core/bytes.js';
import { entryLeafData, type SignedEntry } from '../core/entry/index.js';
import { effectiveAuthority } from '../core/trust.js';
import type { CheckpointRecord } from '../ports/storage.js';
import type { CheckpointView, MemoryRecord } from './api.js';

/** Largest |ms| a Date holds (ECMA-262 §21.4.1.22); beyond it toISOString throws. */
const MAX_DATE_MS = 8.64e15;
/** ISO prefixes (`2026-11-21T22:02:14.`) by whole second: most times of one store share few. */
const isoSeconds = new Map<number, string>();

/**
 * Nanoseconds since the epoch as ISO 8601: exactly `new Date(Number(ns / 1_000_000n))
 * .toISOString()` (a RangeError beyond a Date's range). A search formats two per result;
 * building a Date and its string for each was ~1.5 µs, the cached second's prefix plus the
 * milliseconds is ~0.1 µs (test/memory/records.test.ts pins equality across second, year and
 * sign boundaries).
 */
export function nsToIso(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  if (!(ms >= -MAX_DATE_MS && ms <= MAX_DATE_MS)) return new Date(ms).toISOString(); // throws
  const sec = Math.floor(ms / 1000);
  let prefix = isoSeconds.get(sec);
  if (prefix === undefined) {
    prefix = new Date(sec * 1000).toISOString().slice(0, -4);
    if (isoSeconds.size >= 4096) isoSeconds.clear();
    isoSeconds.set(sec, prefix);
  }
  const r = ms - sec * 1000;
  return `${prefix}${r < 10 ? '00' : r < 100 ? '0' : ''}${r}Z`;
}

/** The verified entry as callers see it (bytes as base64, times as ISO + exact ns). */
export function toMemoryRecord(
  e: SignedEntry,
  leafIndex: number,
  bytes: Uint8Array,
  expiresAtNs?: bigint,
): MemoryRecord {
  const exp = expiresAtNs ?? e.exp;
  return {
    id: e.id,
    content: e.content,
    kind: e.kind,
    tier: e.tier,
    label: e.label,
    authority: effectiveAuthority(e.tier, e.label, true),
    ns: e.ns,
    writer: e.writer,
    kid: e.kid,
    ...(e.uri === undefined ? {} : { source: e.uri }),
    parents: e.parents,
    weights: e.weights,
    createdAt: nsToIso(e.ts),
    createdAtNs: e.ts.toString(),
    ...(exp === undefined ? {} : { expiresAt: nsToIso(exp) }),
    ...(e.sup === undefined ? {} : { supersedes: e.sup }),
    ...(e.rev === undefined ? {} : { reviewedBy: e.rev }),
    leafIndex,
    leafData: toBase64(entryLeafData(e)),
    bytes: toBase64(bytes),
  };
}

export function toCheckpointView(origin: string, cp: CheckpointRecord): CheckpointView {
  return { origin, size: cp.size, root: toBase64(cp.root), note: cp.note };
}
