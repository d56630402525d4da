/**
 * @module memory/log/store-audit
 * `memwarden audit`: verify a whole store offline and report every disagreement as a coded
 * finding instead of stopping at the first one. What it checks (each a named check with a
 * count of items checked and of findings):
 *
 * - `log.head`       the sequencing row agrees with the stored leaves (no leaf past the head);
 * - `log.leaves`     every leaf hash is SHA-256(0x00 ‖ data) and sits at its index;
 * - `log.nodes`      every stored perfect subtree equals its recomputation from the leaves;
 * - `log.checkpoints` every stored checkpoint: its record root equals the recomputed root at its
 *                    size, the signed note parses, names this log and that size/root, and its
 *                    signature verifies under the log's checkpoint key;
 * - `log.consistency` a consistency proof (built from the stored nodes) verifies between every
 *                    two consecutive checkpoints;
 * - `entries.mac`    the HMAC tag under its key id (SMSR component 1);
 * - `entries.record` strict decode, and every denormalised column (id, owner, tier, writer,
 *                    kind, created, content, uri, source hash, expiry) agrees with the signed
 *                    bytes; the tier is within the writer's kind;
 * - `entries.signature` the writer's signature under a key valid at the entry's time and log
 *                    position (the registry, ADR 0004);
 * - `entries.leaf`   the entry's leaf commits it (`id ‖ sig`), and every entry leaf has exactly
 *                    one entry row pointing back at it (a write exists whole or not at all);
 * - `entries.lineage` every signed parent is an entry earlier in the log;
 * - `entries.state`  `deleted` ⇔ a verified tombstone targets the entry; `superseded_by` ⇔ a
 *                    verified newer version signs `sup` = the entry;
 * - `entries.embedding` (optional, needs an embedder) the stored vector is the embedding of
 *                    the signed content;
 * - `tombstones`     every tombstone leaf's signed record (kept in the audit trail) decodes,
 *                    matches its leaf and verifies under the registry;
 * - `registry`       every key hashes to its kid; a principal's id derives from its kind and
 *                    first key, created together; keys form one rotation chain (each key's
 *                    end is its successor's start); revocation fields are coherent.
 *
 * Reading is done in the system scope (the store as opened by deployment tooling).
 */
import { bytesEqual, fromBase64, toHex } from '../../core/bytes.js';
import { verifyEd25519 } from '../../core/crypto/ed25519.js';
import { isKeyId, keyIdFor, parsePrincipalId, principalIdFor } from '../../core/crypto/ids.js';
import {
  type SignedEntry,
  entrySigningInput,
  isRegistryLeafData,
  registryStatementOfLeaf,
  encodeTombstoneBody,
  entryLeafData,
  safeDecodeSignedEntry,
  safeDecodeSignedTombstone,
  tombstoneLeafData,
  tombstoneSigningInput,
  uuidToString,
} from '../../core/entry/index.js';
import type { ErrorCode } from '../../core/errors.js';
import {
  type Frontier,
  EMPTY_FRONTIER,
  appendToFrontier,
  frontierRoot,
  leafHash,
  parseCheckpoint,
  parseNote,
  verifyConsistency,
  verifyNote,
  formatVerifierKey,
  verifyCosignedCheckpoint,
} from '../../core/merkle/index.js';
import { jsonEqual } from '../../core/entry/meta.js';
import { tokenize } from '../../core/text/index.js';
import { mayWriteTier } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { CheckpointRecord, KeyRecord, StoredEntry } from '../../ports/storage.js';
import { RegistryView, sameRecord } from '../identity/registry-view.js';
import { auditReviews } from '../write/held.js';
import type { Ledger } from './ledger.js';

/** The named checks, in report order. */
export const AUDIT_CHECKS = [
  'log.head',
  'log.leaves',
  'log.nodes',
  'log.checkpoints',
  'log.consistency',
  'log.end',
  'entries.mac',
  'entries.record',
  'entries.signature',
  'entries.leaf',
  'entries.lineage',
  'entries.state',
  'entries.embedding',
  'tombstones',
  'registry',
  'reviews',
] as const;
export type AuditCheck = (typeof AUDIT_CHECKS)[number];

/** One disagreement: which check, a stable error code, what it is about, and why. */
export interface AuditFinding {
  readonly check: AuditCheck;
  readonly code: ErrorCode;
  /** An entry id, `leaf:N`, `node:L/I`, `checkpoint:N`, `key:KID` or `principal:ID`. */
  readonly subject: string;
  readonly message: string;
}

export interface StoreAuditReport {
  readonly ok: boolean;
  readonly logSize: number;
  /** Per check: items checked and findings. */
  readonly checks: Record<AuditCheck, { checked: number; failed: number }>;
  readonly findings: readonly AuditFinding[];
}

export interface StoreAuditOptions {
  /** Recompute every stored embedding with this embedder and compare (slow: one model call per entry). */
  readonly embedder?: Embedder;
  /** Leaves / entries read per storage call. Default 2048. */
  readonly batchSize?: number;
  /** Stop collecting after this many findings (the counts stay exact). Default 10,000. */
  readonly maxFindings?: number;
  /**
   * The latest checkpoint known outside the database (a signed note, e.g. the witness's
   * cosigned copy); default: the anchor the host recorded beside its keys. The log must
   * contain it: a store that ends earlier, or differs at that size, was rolled back.
   */
  readonly checkpoint?: string;
  /** Require the checkpoint to be cosigned by at least `minCosignatures` of these witnesses. */
  readonly witnesses?: { readonly keys: readonly string[]; readonly minCosignatures: number };
}

const TS_PREFIX = new TextEncoder().encode('ts:');

function isTombstoneLeaf(data: Uint8Array): boolean {
  return data.length === 99 && bytesEqual(data.subarray(0, 3), TS_PREFIX);
}

/** Audit the store behind `ledger` (opened by the caller; nothing is written). */
export async function auditStore(
  ledger: Ledger,
  opts: StoreAuditOptions = {},
): Promise<StoreAuditReport> {
  const batch = opts.batchSize ?? 2048;
  const maxFindings = opts.maxFindings ?? 10_000;
  const storage = ledger.storage;
  const checks = Object.fromEntries(
    AUDIT_CHECKS.map((c) => [c, { checked: 0, failed: 0 }]),
  ) as Record<AuditCheck, { checked: number; failed: number }>;
  const findings: AuditFinding[] = [];
  const find = (check: AuditCheck, code: ErrorCode, subject: string, message: string): void => {
    checks[check].failed++;
    if (findings.length < maxFindings) findings.push({ check, code, subject, message });
  };
  const count = (check: AuditCheck, n = 1): void => {
    checks[check].checked += n;
  };

  // ---- the log: leaves, nodes, checkpoints --------------------------------------------------
  const size = await storage.logSize();
  count('log.head');
  const past = await storage.getLeaves(size, size + 1);
  if (past.length > 0)
    find('log.head', 'LOG_CORRUPT', `leaf:${size}`, 'a leaf exists past the log head');

  const cps = await allCheckpoints(ledger);
  const cpBySize = new Map<number, CheckpointRecord>();
  for (const cp of cps) {
    if (cp.size > size) {
      count('log.checkpoints');
      find(
        'log.checkpoints',
        'LOG_CORRUPT',
        `checkpoint:${cp.size}`,
        'checkpoint beyond the log head',
      );
    } else cpBySize.set(cp.size, cp);
  }
  const checkCp = (cp: CheckpointRecord, root: Uint8Array): void => {
    count('log.checkpoints');
    const subject = `checkpoint:${cp.size}`;
    if (!bytesEqual(cp.root, root)) {
      find(
        'log.checkpoints',
        'LOG_ROOT_MISMATCH',
        subject,
        'checkpoint root differs from the recomputed root',
      );
      return;
    }
    let body;
    try {
      body = parseCheckpoint(parseNote(cp.note).text);
    } catch {
      find(
        'log.checkpoints',
        'LOG_CHECKPOINT_MALFORMED',
        subject,
        'checkpoint note does not parse',
      );
      return;
    }
    if (
      body.size !== cp.size ||
      !bytesEqual(body.root, root) ||
      body.origin !== ledger.log.origin
    ) {
      find(
        'log.checkpoints',
        'LOG_CORRUPT',
        subject,
        'checkpoint note disagrees with its record or the log',
      );
      return;
    }
    const pk = ledger.checkpointPublicKey;
    try {
      verifyNote(cp.note, ledger.log.origin, pk, (m, s) => verifyEd25519(pk, m, s));
    } catch {
      find(
        'log.checkpoints',
        'LOG_CHECKPOINT_SIGNATURE_INVALID',
        subject,
        'checkpoint signature does not verify',
      );
    }
  };
  const cp0 = cpBySize.get(0);
  if (cp0 !== undefined) checkCp(cp0, frontierRoot(EMPTY_FRONTIER));

  // The latest checkpoint known outside the database (given, or the host's anchor): the log
  // must reach it and agree with it, else the database was rolled back.
  const anchor = await latestKnown(ledger, opts, count, find);
  let anchorRoot: Uint8Array | undefined;

  /** entry id → leaf index of its entry leaf; tombstone and registry leaves by index. */
  const entryLeaves = new Map<string, number>();
  const tombstoneLeaves: { index: number; data: Uint8Array; entryId: string }[] = [];
  const registryLeaves: { index: number; data: Uint8Array; entryId: string }[] = [];
  let frontier: Frontier = EMPTY_FRONTIER;
  for (let start = 0; start < size; start += batch) {
    const end = Math.min(size, start + batch);
    const leaves = await storage.getLeaves(start, end);
    const hashes: Uint8Array[] = [];
    for (let i = start; i < end; i++) {
      const l = leaves[i - start];
      count('log.leaves');
      if (l === undefined || l.index !== i) {
        find('log.leaves', 'LOG_CORRUPT', `leaf:${i}`, 'leaf missing from the store');
        // Carry on with the stored hash unknown: the tree from here cannot match anything.
        hashes.push(new Uint8Array(32));
        continue;
      }
      const h = leafHash(l.data);
      if (!bytesEqual(h, l.hash))
        find('log.leaves', 'LOG_CORRUPT', `leaf:${i}`, 'stored leaf hash does not match its data');
      hashes.push(h);
      const tsLeaf = isTombstoneLeaf(l.data);
      if ((l.kind === 'tombstone') !== tsLeaf) {
        find(
          'log.leaves',
          'LOG_CORRUPT',
          `leaf:${i}`,
          `leaf kind '${l.kind}' does not match its data`,
        );
      }
      if ((l.kind === 'registry') !== isRegistryLeafData(l.data)) {
        find(
          'log.leaves',
          'LOG_CORRUPT',
          `leaf:${i}`,
          `leaf kind '${l.kind}' does not match its data`,
        );
      }
      if (l.kind === 'tombstone')
        tombstoneLeaves.push({ index: i, data: l.data, entryId: l.entryId });
      else if (l.kind === 'registry')
        registryLeaves.push({ index: i, data: l.data, entryId: l.entryId });
      else if (entryLeaves.has(l.entryId)) {
        find('log.leaves', 'LOG_CORRUPT', `leaf:${i}`, 'a second leaf names the same entry');
      } else entryLeaves.set(l.entryId, i);
    }
    // Advance, stopping at every checkpoint size inside this batch.
    let pos = 0;
    const stops = [...cpBySize.keys(), ...(anchor === undefined ? [] : [anchor.size])]
      .filter((s) => s > start && s <= end)
      .sort((a, b) => a - b);
    for (const stop of [...stops, end]) {
      if (stop - start <= pos) continue;
      const step = appendToFrontier(frontier, hashes.slice(pos, stop - start));
      if (step.completed.length > 0) {
        const stored = await storage.getNodes(step.completed);
        step.completed.forEach((n, k) => {
          count('log.nodes');
          const s = stored[k];
          if (s === undefined || !bytesEqual(s, n.hash)) {
            find(
              'log.nodes',
              'LOG_CORRUPT',
              `node:${n.level}/${n.index}`,
              s === undefined
                ? 'stored node missing'
                : 'stored node hash differs from its recomputation',
            );
          }
        });
      }
      frontier = step.frontier;
      pos = stop - start;
      const cp = cpBySize.get(stop);
      if (cp !== undefined) checkCp(cp, frontierRoot(frontier));
      if (anchor !== undefined && stop === anchor.size) anchorRoot = frontierRoot(frontier);
    }
  }

  // Consistency between consecutive checkpoints, proved from the stored nodes.
  const sizes = [...cpBySize.keys()].sort((a, b) => a - b);
  for (let i = 1; i < sizes.length; i++) {
    const a = cpBySize.get(sizes[i - 1] as number) as CheckpointRecord;
    const b = cpBySize.get(sizes[i] as number) as CheckpointRecord;
    if (a.size === 0) continue;
    count('log.consistency');
    const subject = `checkpoint:${a.size}..${b.size}`;
    try {
      const proof = await ledger.log.consistencyProof(a.size, b.size);
      if (!verifyConsistency(a.size, b.size, proof, a.root, b.root)) {
        find(
          'log.consistency',
          'LOG_PROOF_INVALID',
          subject,
          'consistency proof does not verify between the checkpoints',
        );
      }
    } catch (e) {
      find(
        'log.consistency',
        codeOf(e, 'LOG_CORRUPT'),
        subject,
        'consistency proof cannot be built from the stored nodes',
      );
    }
  }

  if (anchor !== undefined && anchor.size > 0) {
    count('log.end');
    const subject = `checkpoint:${anchor.size}`;
    if (anchor.size > size)
      find(
        'log.end',
        'LOG_CORRUPT',
        subject,
        `the log ends at ${size}, before the latest checkpoint signed (${anchor.size}): rolled back`,
      );
    else if (anchorRoot === undefined || !bytesEqual(anchorRoot, anchor.root))
      find(
        'log.end',
        'LOG_ROOT_MISMATCH',
        subject,
        'the log differs from the latest checkpoint signed at its size',
      );
  }

  // ---- the registry ---------------------------------------------------------------------------
  // Its history is the log's signed statements; the tables are a cache compared against it.
  const view = await auditRegistry(ledger, registryLeaves, count, find);

  // ---- tombstones -----------------------------------------------------------------------------
  /** target entry id → ids of verified tombstones. */
  const deletedBy = new Map<string, string>();
  /** target → who signed its tombstone (checked against the target's owner below). */
  const deleters = new Map<string, { writer: string; subject: string }>();
  for (const t of tombstoneLeaves) {
    count('tombstones');
    const subject = `leaf:${t.index}`;
    if (!isTombstoneLeaf(t.data)) continue; // already a log.leaves finding
    let target: string;
    let id: string;
    try {
      target = uuidToString(t.data.subarray(3, 19));
      id = uuidToString(t.data.subarray(19, 35));
    } catch {
      find('tombstones', 'LOG_CORRUPT', subject, 'tombstone leaf holds malformed ids');
      continue;
    }
    if (t.entryId !== id) {
      find('tombstones', 'LOG_CORRUPT', subject, 'tombstone leaf names another record');
      continue;
    }
    const events = await storage.listAudit({ limit: 1000, subject: target });
    const ev = events.find((e) => e.id === id && e.action === 'entry.deleted');
    const b64 = ev?.details.tombstone;
    if (typeof b64 !== 'string') {
      find('tombstones', 'LOG_CORRUPT', subject, 'the signed tombstone record is missing');
      continue;
    }
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(b64);
    } catch {
      find('tombstones', 'CODEC_MALFORMED', subject, 'the signed tombstone record is not base64');
      continue;
    }
    const dec = safeDecodeSignedTombstone(bytes);
    if (!dec.ok) {
      find('tombstones', dec.error.code, subject, 'the signed tombstone record does not decode');
      continue;
    }
    const ts = dec.value;
    if (!bytesEqual(tombstoneLeafData(ts), t.data)) {
      find(
        'tombstones',
        'LOG_PROOF_INVALID',
        subject,
        'the tombstone leaf does not commit its record',
      );
      continue;
    }
    const v = view.verify(
      ts.writer,
      ts.kid,
      ts.ts,
      t.index,
      tombstoneSigningInput(encodeTombstoneBody(ts)),
      ts.sig,
    );
    if (!v.ok) {
      find('tombstones', v.code, subject, 'tombstone signature does not verify');
      continue;
    }
    deletedBy.set(target, id);
    deleters.set(target, { writer: ts.writer, subject });
  }

  // ---- entries --------------------------------------------------------------------------------
  const seen = new Set<string>();
  /** sup target → superseding (verified) id. */
  const supersedes = new Map<string, string>();
  const parentsOf: { id: string; leafIndex: number; parents: readonly string[] }[] = [];
  const states: { id: string; deleted: boolean; supersededBy: string | undefined }[] = [];
  const signedOwner = new Map<string, string>();
  const macs = ledger.keys.macs;
  let after = -1;
  for (;;) {
    const rows = await storage.listEntries({ afterLeafIndex: after, limit: batch });
    let fresh = 0;
    for (const e of rows) {
      if (seen.has(e.id)) continue;
      // Appended after the audit read the head (an online store): not part of this audit.
      if (e.leafIndex >= size && !entryLeaves.has(e.id) && (await storage.logSize()) > e.leafIndex)
        continue;
      seen.add(e.id);
      fresh++;
      states.push({ id: e.id, deleted: e.deleted === true, supersededBy: e.supersededBy });
      const entry = await auditEntry(e);
      if (entry === undefined) continue;
      signedOwner.set(entry.id, entry.ns);
      if (entry.sup !== undefined) supersedes.set(entry.sup, entry.id);
      parentsOf.push({ id: entry.id, leafIndex: e.leafIndex, parents: entry.parents });
    }
    if (rows.length < batch) break;
    const last = (rows[rows.length - 1] as StoredEntry).leafIndex;
    // Re-read the last index (rows sharing it may straddle the page) unless nothing was new.
    after = fresh === 0 ? last : last - 1;
  }
  for (const [id, index] of entryLeaves) {
    if (!seen.has(id)) {
      count('entries.leaf');
      find('entries.leaf', 'STORAGE_NOT_FOUND', id, `the entry leaf ${index} has no entry row`);
    }
  }
  for (const p of parentsOf) {
    count('entries.lineage');
    for (const parent of p.parents) {
      const at = entryLeaves.get(parent); // the log, not a row's claim, says where it is
      if (at === undefined)
        find(
          'entries.lineage',
          'LINEAGE_INVALID',
          p.id,
          `signed parent ${parent} is not in the log`,
        );
      else if (at >= p.leafIndex)
        find(
          'entries.lineage',
          'LINEAGE_INVALID',
          p.id,
          `signed parent ${parent} is not earlier in the log`,
        );
    }
  }
  // A tombstone deletes only what its signer may delete: its own scope's entry, or any as an
  // operator (issue 17 finding 8: the CLI once tombstoned other principals' entries).
  for (const [target, d] of deleters) {
    const owner = signedOwner.get(target);
    if (owner === undefined || owner === d.writer || view.kindOf(d.writer) === 'operator') continue;
    find(
      'tombstones',
      'AUTH_FORBIDDEN',
      d.subject,
      `signed by ${d.writer}, who does not own ${target}`,
    );
  }
  for (const s of states) {
    count('entries.state');
    const tomb = deletedBy.get(s.id);
    if (s.deleted && tomb === undefined)
      find('entries.state', 'ENTRY_INVALID', s.id, 'marked deleted without a verified tombstone');
    if (!s.deleted && tomb !== undefined)
      find(
        'entries.state',
        'ENTRY_INVALID',
        s.id,
        `tombstone ${tomb} targets it but it is not marked deleted`,
      );
    const newer = supersedes.get(s.id);
    if (s.supersededBy !== newer) {
      find(
        'entries.state',
        'ENTRY_INVALID',
        s.id,
        newer === undefined
          ? `marked superseded by ${s.supersededBy} without a verified newer version`
          : `version ${newer} supersedes it but superseded_by is ${s.supersededBy ?? 'empty'}`,
      );
    }
  }

  // ---- reviews: every held item's MAC (its payload and decision state) ------------------------
  await auditReviews(storage, ledger.keys.macs, count, find);

  return {
    ok: findings.length === 0 && AUDIT_CHECKS.every((c) => checks[c].failed === 0),
    logSize: size,
    checks,
    findings,
  };

  /** The per-entry checks; the decoded entry when its signature holds. */
  async function auditEntry(e: StoredEntry): Promise<SignedEntry | undefined> {
    count('entries.mac');
    const mac = macs.check(e.macKid, e.bytes, e.mac);
    if (!mac.ok) find('entries.mac', mac.code, e.id, 'HMAC tag does not verify');

    count('entries.record');
    const dec = safeDecodeSignedEntry(e.bytes);
    if (!dec.ok) {
      find('entries.record', dec.error.code, e.id, 'signed bytes do not decode');
      return undefined;
    }
    const entry = dec.value;
    const bad = columnMismatches(e, entry);
    if (bad.length > 0)
      find(
        'entries.record',
        'ENTRY_INVALID',
        e.id,
        `columns disagree with the signed record: ${bad.join(', ')}`,
      );
    let kindOk = false;
    try {
      kindOk = mayWriteTier(parsePrincipalId(entry.writer).kind, entry.tier);
    } catch {
      kindOk = false;
    }
    if (!kindOk)
      find(
        'entries.record',
        'ENTRY_INVALID',
        e.id,
        `tier ${entry.tier} is above the writer's kind`,
      );

    count('entries.leaf');
    const leafAt = entryLeaves.get(e.id);
    if (leafAt !== e.leafIndex) {
      find(
        'entries.leaf',
        'LOG_PROOF_INVALID',
        e.id,
        leafAt === undefined
          ? 'no entry leaf commits this entry'
          : `its leaf is ${leafAt}, the row says ${e.leafIndex}`,
      );
    } else {
      const leaf = await storage.getLeaf(e.leafIndex);
      let expected: Uint8Array | undefined;
      try {
        expected = entryLeafData(entry);
      } catch {
        expected = undefined;
      }
      if (leaf === undefined || expected === undefined || !bytesEqual(leaf.data, expected)) {
        find(
          'entries.leaf',
          'LOG_PROOF_INVALID',
          e.id,
          'the leaf does not commit this entry (id ‖ sig)',
        );
      }
    }

    count('entries.signature');
    const sig = view.verify(
      entry.writer,
      entry.kid,
      entry.ts,
      e.leafIndex,
      entrySigningInput(entry),
      entry.sig,
    );
    if (!sig.ok) {
      find(
        'entries.signature',
        sig.code,
        e.id,
        'writer signature does not verify under the registry',
      );
    }

    if (opts.embedder !== undefined) {
      count('entries.embedding');
      if (e.embedding === undefined)
        find('entries.embedding', 'ENTRY_INVALID', e.id, 'no stored embedding');
      else {
        const [v] = await opts.embedder.embed([entry.content]);
        if (v === undefined || cosine(v, e.embedding) < 0.999) {
          find(
            'entries.embedding',
            'ENTRY_INVALID',
            e.id,
            'stored embedding is not the embedding of the signed content',
          );
        }
      }
    }
    // Its signed fields (sup, parents) count when the signature holds, whatever the columns say.
    return sig.ok ? entry : undefined;
  }
}

/** Every stored checkpoint, oldest first (the latest alone when the store cannot list them). */
async function allCheckpoints(ledger: Ledger): Promise<CheckpointRecord[]> {
  const s = ledger.storage;
  if (s.listCheckpoints !== undefined) return s.listCheckpoints();
  const latest = await s.latestCheckpoint();
  return latest === undefined ? [] : [latest];
}

/** Denormalised columns that disagree with the signed record. */
function columnMismatches(e: StoredEntry, x: SignedEntry): string[] {
  const bad: string[] = [];
  if (e.id !== x.id) bad.push('id');
  if (e.owner !== x.ns) bad.push('owner');
  if (e.tier !== x.tier) bad.push('tier');
  if (e.writer !== undefined && e.writer !== x.writer) bad.push('writer');
  if (e.kind !== undefined && e.kind !== x.kind) bad.push('kind');
  if (e.createdAtNs !== undefined && e.createdAtNs !== x.ts) bad.push('created_ns');
  if (e.content !== undefined && e.content !== x.content) bad.push('content');
  if (e.uri !== x.uri && !(e.uri === undefined && x.uri === undefined)) bad.push('uri');
  if (e.srcHash !== undefined && e.srcHash !== toHex(x.src)) bad.push('src_hash');
  // Migration 50's columns. A row stored before it has no memory id (it reads as its own) and
  // no v2 fields; every row stored since carries all of them as the record says.
  if (e.memoryId !== undefined && e.memoryId !== (x.lid ?? x.id)) bad.push('memory_id');
  if (e.memoryId === undefined && x.lid !== undefined) bad.push('memory_id');
  if (e.eventAtNs !== x.evt) bad.push('event_ns');
  if (!jsonEqual(e.metadata, x.meta)) bad.push('metadata');
  if (e.runId !== x.run) bad.push('run_id');
  if (e.agentId !== x.agent) bad.push('agent_id');
  if (e.lexLen !== undefined && e.lexLen !== tokenize(x.content).length) bad.push('lex_len');
  // Renew-on-use only moves the expiry forward, and a never-expiring entry stays so.
  if (
    x.exp === undefined
      ? e.expiresAtNs !== undefined
      : e.expiresAtNs === undefined || e.expiresAtNs < x.exp
  ) {
    bad.push('expires_ns');
  }
  return bad;
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return -1;
  let d = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    d += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? -1 : d / Math.sqrt(na * nb);
}

function codeOf(e: unknown, fallback: ErrorCode): ErrorCode {
  const c = (e as { code?: unknown } | undefined)?.code;
  return typeof c === 'string' ? (c as ErrorCode) : fallback;
}

/** The latest checkpoint known outside the database, verified; undefined when there is none. */
async function latestKnown(
  ledger: Ledger,
  opts: StoreAuditOptions,
  count: (c: AuditCheck, n?: number) => void,
  find: (c: AuditCheck, code: ErrorCode, subject: string, message: string) => void,
): Promise<{ size: number; root: Uint8Array } | undefined> {
  const note = opts.checkpoint ?? (await ledger.anchoredCheckpoint());
  if (note === undefined) return undefined;
  const pk = ledger.checkpointPublicKey;
  try {
    if (opts.witnesses !== undefined) {
      const c = verifyCosignedCheckpoint(note, {
        logKey: formatVerifierKey(ledger.log.origin, pk),
        witnesses: opts.witnesses.keys,
        minCosignatures: opts.witnesses.minCosignatures,
      });
      return { size: c.checkpoint.size, root: c.checkpoint.root };
    }
    verifyNote(note, ledger.log.origin, pk, (m, s) => verifyEd25519(pk, m, s));
    const body = parseCheckpoint(parseNote(note).text);
    if (body.origin !== ledger.log.origin) throw new Error('another log');
    return { size: body.size, root: body.root };
  } catch (e) {
    count('log.end');
    find(
      'log.end',
      codeOf(e, 'LOG_CHECKPOINT_SIGNATURE_INVALID'),
      'checkpoint:latest',
      'the latest known checkpoint does not verify under the log key (or its witnesses)',
    );
    return undefined;
  }
}

/**
 * The registry (ADR 0033): its history is the signed statements in the log, replayed in order
 * (each must be signed by the host log key and hold — a rogue successor key or a re-opened
 * revocation cannot be one); the `principals` / `keys` tables must agree with the result, so
 * a key row inserted, re-opened or edited at rest is a finding. A store without any statement
 * predates them (legacy): its tables are checked for their own consistency as before. Returns
 * the view the entries and tombstones are verified under.
 */
async function auditRegistry(
  ledger: Ledger,
  leaves: readonly { index: number; data: Uint8Array; entryId: string }[],
  count: (c: AuditCheck, n?: number) => void,
  find: (c: AuditCheck, code: ErrorCode, subject: string, message: string) => void,
): Promise<RegistryView> {
  const s = ledger.storage;
  const logKey = ledger.checkpointPublicKey;
  const principals = await s.listPrincipals();
  const keysBy = new Map<string, KeyRecord[]>();
  for (const p of principals) keysBy.set(p.id, await s.keysOf(p.id));
  if (leaves.length === 0) {
    auditLegacyRegistry(principals, keysBy, count, find);
    return RegistryView.fromTables(logKey, principals, keysBy);
  }
  const view = new RegistryView(logKey);
  for (const l of leaves) {
    count('registry');
    const subject = `leaf:${l.index}`;
    let st;
    try {
      st = registryStatementOfLeaf(l.data);
    } catch (e) {
      find('registry', codeOf(e, 'CODEC_MALFORMED'), subject, 'registry statement does not decode');
      continue;
    }
    if (st.id !== l.entryId) {
      find('registry', 'LOG_CORRUPT', subject, 'registry leaf names another record');
      continue;
    }
    const v = view.check(st, l.index);
    if (!v.ok) {
      find(
        'registry',
        v.code ?? 'KEY_INVALID',
        subject,
        `registry statement refused: ${v.message ?? ''}`,
      );
      continue;
    }
    view.apply(st, l.index);
  }
  // The tables against the signed history.
  const tableKeys = new Map<string, KeyRecord>();
  for (const p of principals) {
    count('registry');
    const subject = `principal:${p.id}`;
    const signed = view.principal(p.id);
    if (signed === undefined) {
      find('registry', 'PRINCIPAL_UNKNOWN', subject, 'no signed registration of this principal');
      continue;
    }
    if (signed.kind !== p.kind)
      find(
        'registry',
        'PRINCIPAL_INVALID',
        subject,
        `kind ${p.kind} differs from its signed registration (${signed.kind})`,
      );
    if (signed.createdAtNs !== p.createdAtNs)
      find(
        'registry',
        'KEY_INVALID',
        subject,
        'registration time differs from its signed registration',
      );
    for (const k of keysBy.get(p.id) ?? []) tableKeys.set(k.kid, k);
  }
  // Keys rows naming a principal that is not in the table are found through the signed keys.
  for (const k of view.allKeys()) {
    count('registry');
    const subject = `key:${k.kid}`;
    const row = tableKeys.get(k.kid) ?? (await s.getKey(k.kid));
    tableKeys.delete(k.kid);
    if (row === undefined) find('registry', 'KEY_UNKNOWN', subject, 'a signed key has no row');
    else if (!sameRecord(row, k))
      find(
        'registry',
        'KEY_INVALID',
        subject,
        'the key row differs from the signed registry (validity, revocation or key)',
      );
  }
  for (const k of tableKeys.values()) {
    count('registry');
    find(
      'registry',
      'KEY_UNKNOWN',
      `key:${k.kid}`,
      'a key row no signed statement registered (a rogue key)',
    );
  }
  await auditApiKeys(s, view, count, find);
  return view;
}

/**
 * The `api_keys` table against the signed API-key statements (ADR 0070): a row no statement
 * issued (inserted at rest), one re-pointed at another principal, one whose revocation was
 * undone (or a live key marked revoked), and a signed key whose row is gone are findings.
 * A store whose log has no API-key statement predates them (its keys are adopted by the next
 * process that opens it for writing): nothing to compare yet.
 */
async function auditApiKeys(
  s: Ledger['storage'],
  view: RegistryView,
  count: (c: AuditCheck, n?: number) => void,
  find: (c: AuditCheck, code: ErrorCode, subject: string, message: string) => void,
): Promise<void> {
  if (view.apiKeyStatements === 0 || s.listApiKeys === undefined) return;
  const rows = new Map((await s.listApiKeys()).map((r) => [toHex(r.keyHash), r]));
  for (const k of view.allApiKeys()) {
    count('registry');
    const subject = `apikey:${k.keyId}`;
    const row = rows.get(k.keyId);
    rows.delete(k.keyId);
    if (row === undefined) {
      find('registry', 'KEY_UNKNOWN', subject, 'a signed API key has no row');
      continue;
    }
    if (row.principalId !== k.principal)
      find('registry', 'KEY_INVALID', subject, 'the API key row names another principal');
    if (row.revoked !== (k.revokedAtNs !== undefined))
      find(
        'registry',
        'KEY_INVALID',
        subject,
        row.revoked
          ? 'the API key row is revoked, its statements are not'
          : 'the API key row is live, a signed statement revoked it',
      );
  }
  for (const [keyId] of rows) {
    count('registry');
    find(
      'registry',
      'KEY_UNKNOWN',
      `apikey:${keyId}`,
      'an API key row no signed statement issued (a rogue key)',
    );
  }
}

/**
 * A legacy store's tables on their own: kid = hash(key); principal id = kind ‖ hash(first key),
 * its record created with that key; keys sorted by start form one chain (each key ends where
 * its successor starts); the last key is open, or closed by a revocation at the same instant;
 * revocation fields all set or all clear.
 */
function auditLegacyRegistry(
  principals: readonly { id: string; kind: string; createdAtNs: bigint }[],
  keysBy: ReadonlyMap<string, readonly KeyRecord[]>,
  count: (c: AuditCheck, n?: number) => void,
  find: (c: AuditCheck, code: ErrorCode, subject: string, message: string) => void,
): void {
  for (const p of principals) {
    count('registry');
    const subject = `principal:${p.id}`;
    let kind;
    try {
      kind = parsePrincipalId(p.id).kind;
    } catch {
      find('registry', 'PRINCIPAL_INVALID', subject, 'malformed principal id');
      continue;
    }
    if (kind !== p.kind)
      find('registry', 'PRINCIPAL_INVALID', subject, `kind ${p.kind} does not match the id`);
    const keys = [...(keysBy.get(p.id) ?? [])].sort((a, b) =>
      a.validFromNs < b.validFromNs ? -1 : a.validFromNs > b.validFromNs ? 1 : 0,
    );
    const first = keys[0];
    if (first === undefined) {
      find('registry', 'KEY_UNKNOWN', subject, 'principal has no key');
      continue;
    }
    let derived: string | undefined;
    try {
      derived = principalIdFor(kind, first.publicKey);
    } catch {
      derived = undefined;
    }
    if (derived !== p.id)
      find('registry', 'PRINCIPAL_INVALID', subject, 'id does not derive from the first key');
    if (first.validFromNs !== p.createdAtNs)
      find('registry', 'KEY_INVALID', subject, 'first key does not start at registration');
    keys.forEach((k, i) => {
      count('registry');
      auditKey(k, keys[i + 1], find);
    });
  }
}

function auditKey(
  k: KeyRecord,
  next: KeyRecord | undefined,
  find: (c: AuditCheck, code: ErrorCode, subject: string, message: string) => void,
): void {
  const subject = `key:${k.kid}`;
  let hashOk = false;
  try {
    hashOk = isKeyId(k.kid) && keyIdFor(k.publicKey) === k.kid && k.alg === 'ed25519';
  } catch {
    hashOk = false;
  }
  if (!hashOk) find('registry', 'KEY_INVALID', subject, 'public key does not hash to its kid');
  const revoked = k.revokedAtNs !== undefined;
  if (
    revoked !== (k.revocationReason !== undefined) ||
    revoked !== (k.revokedAtLogSize !== undefined)
  ) {
    find('registry', 'KEY_INVALID', subject, 'revocation fields are partly set');
  }
  if (k.validUntilNs !== undefined && k.validUntilNs <= k.validFromNs) {
    find('registry', 'KEY_INVALID', subject, 'validity ends before it starts');
  }
  if (next !== undefined) {
    if (k.validUntilNs !== next.validFromNs) {
      find(
        'registry',
        'KEY_INVALID',
        subject,
        `rotation chain broken: ends at ${k.validUntilNs ?? 'never'}, successor starts at ${next.validFromNs}`,
      );
    }
  } else if (k.validUntilNs !== undefined && k.validUntilNs !== k.revokedAtNs) {
    find(
      'registry',
      'KEY_INVALID',
      subject,
      'the last key is closed without a successor or a revocation',
    );
  } else if (k.validUntilNs === undefined && revoked) {
    find('registry', 'KEY_INVALID', subject, 'a revoked key is still open');
  }
}
