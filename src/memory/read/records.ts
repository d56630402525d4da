/**
 * @module memory/read/records
 * The JSON view of a verified entry (`MemoryRecord`) and of proofs and checkpoints.
 */
import { toBase64 } from '../../core/bytes.js';
import { entryLeafData, type SignedEntry } from '../../core/entry/index.js';
import { effectiveAuthority } from '../../core/trust.js';
import type { CheckpointRecord } from '../../ports/storage.js';
import type { CheckpointView, MemoryRecord } from '../api.js';

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

/**
 * What a record of one signed entry always holds, whatever its expiry: the base64 of its
 * bytes and leaf data, its times as text, and the JSON of the fields before and after
 * `expiresAt` (built on first use). Keyed weakly by the entry's bytes object (the read model
 * and the ledger keep one per stored row, so a hot entry is encoded once, not on every search
 * that returns it), and reused only for the same decoded entry object with the same values
 * the parts were derived from, at the same leaf index.
 */
interface RecordParts {
  readonly e: SignedEntry;
  /** The entry's values when the parts were made (the record's fields before `expiresAt`,
   *  and after it). */
  readonly head: Omit<
    MemoryRecord,
    'expiresAt' | 'supersedes' | 'reviewedBy' | 'leafIndex' | 'leafData' | 'bytes'
  >;
  readonly tail: Pick<
    MemoryRecord,
    'supersedes' | 'reviewedBy' | 'leafIndex' | 'leafData' | 'bytes'
  >;
  readonly sig: Uint8Array;
  readonly ts: bigint;
  /** JSON of `head` without its closing brace, of `tail` without its opening one. */
  headJson?: string;
  tailJson?: string;
}

const partsByBytes = new WeakMap<Uint8Array, RecordParts>();
/** Records `toMemoryRecord` made, with their parts (for `memoryRecordJson`). */
const madeRecords = new WeakMap<MemoryRecord, RecordParts>();

function partsOf(e: SignedEntry, leafIndex: number, bytes: Uint8Array): RecordParts {
  const hit = partsByBytes.get(bytes);
  if (hit !== undefined && hit.e === e && hit.tail.leafIndex === leafIndex && fresh(hit))
    return hit;
  const parts: RecordParts = {
    e,
    sig: e.sig,
    ts: e.ts,
    head: {
      id: e.lid ?? e.id,
      versionId: e.id,
      content: e.content,
      kind: e.kind,
      tier: e.tier,
      label: e.label,
      authority: effectiveAuthority(e.tier, e.label, true),
      ns: e.ns,
      writer: e.writer,
      kid: e.kid,
      ...(e.uri === undefined ? {} : { source: e.uri }),
      ...(e.run === undefined ? {} : { runId: e.run }),
      ...(e.agent === undefined ? {} : { agentId: e.agent }),
      ...(e.meta === undefined ? {} : { metadata: e.meta }),
      ...(e.evt === undefined ? {} : { eventAt: nsToIso(e.evt), eventAtNs: e.evt.toString() }),
      parents: [...e.parents],
      weights: [...e.weights],
      createdAt: nsToIso(e.ts),
      createdAtNs: e.ts.toString(),
    },
    tail: {
      ...(e.sup === undefined ? {} : { supersedes: e.sup }),
      ...(e.rev === undefined ? {} : { reviewedBy: e.rev }),
      leafIndex,
      leafData: toBase64(entryLeafData(e)),
      bytes: toBase64(bytes),
    },
  };
  partsByBytes.set(bytes, parts);
  return parts;
}

/** The entry still has the values its parts were derived from. */
function fresh(p: RecordParts): boolean {
  const { e, head: h, tail: t } = p;
  return (
    e.sig === p.sig &&
    e.ts === p.ts &&
    (e.lid ?? e.id) === h.id &&
    e.id === h.versionId &&
    e.run === h.runId &&
    e.agent === h.agentId &&
    e.meta === h.metadata &&
    (e.evt === undefined ? h.eventAtNs === undefined : e.evt.toString() === h.eventAtNs) &&
    e.content === h.content &&
    e.kind === h.kind &&
    e.tier === h.tier &&
    e.label === h.label &&
    e.ns === h.ns &&
    e.writer === h.writer &&
    e.kid === h.kid &&
    e.uri === h.source &&
    sameList(e.parents, h.parents) &&
    sameList(e.weights, h.weights) &&
    e.sup === t.supersedes &&
    e.rev === t.reviewedBy
  );
}

/** The verified entry as callers see it (bytes as base64, times as ISO + exact ns). */
export function toMemoryRecord(
  e: SignedEntry,
  leafIndex: number,
  bytes: Uint8Array,
  expiresAtNs?: bigint,
): MemoryRecord {
  const exp = expiresAtNs ?? e.exp;
  const parts = partsOf(e, leafIndex, bytes);
  const { head: h, tail: t } = parts;
  // Built key by key (the same keys in the same order as the object literal with optional
  // spreads it replaces, without a temporary object per optional field).
  const rec: { -readonly [K in keyof MemoryRecord]?: MemoryRecord[K] } = {
    id: h.id,
    versionId: e.id,
    content: e.content,
    kind: e.kind,
    tier: e.tier,
    label: e.label,
    authority: h.authority,
    ns: e.ns,
    writer: e.writer,
    kid: e.kid,
  };
  if (e.uri !== undefined) rec.source = e.uri;
  if (e.run !== undefined) rec.runId = e.run;
  if (e.agent !== undefined) rec.agentId = e.agent;
  if (e.meta !== undefined) rec.metadata = e.meta;
  if (h.eventAt !== undefined) rec.eventAt = h.eventAt;
  if (h.eventAtNs !== undefined) rec.eventAtNs = h.eventAtNs;
  rec.parents = e.parents;
  rec.weights = e.weights;
  rec.createdAt = h.createdAt;
  rec.createdAtNs = h.createdAtNs;
  if (exp !== undefined) rec.expiresAt = nsToIso(exp);
  if (e.sup !== undefined) rec.supersedes = e.sup;
  if (e.rev !== undefined) rec.reviewedBy = e.rev;
  rec.leafIndex = leafIndex;
  rec.leafData = t.leafData;
  rec.bytes = t.bytes;
  madeRecords.set(rec as MemoryRecord, parts);
  return rec as MemoryRecord;
}

/**
 * `JSON.stringify(rec)`, exactly. For a record `toMemoryRecord` made whose own keys and values
 * are still the ones its entry's parts hold (checked: the same keys in the same order, every
 * value the same, the parents and weights element by element; `expiresAt` any string), the text
 * is the parts' cached JSON around the expiry; any other record is stringified. The cached text
 * is the JSON of exactly the values compared, so it can never carry another record's data.
 */
export function memoryRecordJson(rec: MemoryRecord): string {
  const p = madeRecords.get(rec);
  if (p === undefined || !matches(rec, p)) return JSON.stringify(rec);
  if (p.headJson === undefined || p.tailJson === undefined) {
    p.headJson = JSON.stringify(p.head).slice(0, -1);
    p.tailJson = JSON.stringify(p.tail).slice(1);
  }
  const exp = rec.expiresAt === undefined ? '' : `"expiresAt":${JSON.stringify(rec.expiresAt)},`;
  return `${p.headJson},${exp}${p.tailJson}`;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `rec` has exactly the parts' keys, in their order, and their values. */
function matches(rec: MemoryRecord, p: RecordParts): boolean {
  const keys = Object.keys(rec);
  let k = 0;
  for (const key in p.head) {
    if (keys[k++] !== key) return false;
    const v = rec[key as keyof MemoryRecord];
    const want = p.head[key as keyof RecordParts['head']];
    if (Array.isArray(want)) {
      if (!Array.isArray(v) || !sameList(v, want)) return false;
    } else if (v !== want) return false; // metadata: the same object, never a deep compare
  }
  if (keys[k] === 'expiresAt') {
    if (typeof rec.expiresAt !== 'string') return false;
    k++;
  }
  for (const key in p.tail) {
    if (keys[k++] !== key) return false;
    if (rec[key as keyof MemoryRecord] !== p.tail[key as keyof RecordParts['tail']]) return false;
  }
  return k === keys.length;
}

export function toCheckpointView(origin: string, cp: CheckpointRecord): CheckpointView {
  return { origin, size: cp.size, root: toBase64(cp.root), note: cp.note };
}
