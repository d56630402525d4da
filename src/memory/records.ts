/**
 * @module memory/records
 * The JSON view of a verified entry (`MemoryRecord`) and of proofs and checkpoints.
 */
import { toBase64 } from '../core/bytes.js';
import { entryLeafData, type SignedEntry } from '../core/entry/index.js';
import { effectiveAuthority } from '../core/trust.js';
import type { CheckpointRecord } from '../ports/storage.js';
import type { CheckpointView, MemoryRecord } from './api.js';

export function nsToIso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
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
