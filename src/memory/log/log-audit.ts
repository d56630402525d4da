/**
 * @module memory/log/log-audit
 * Full audit of a stored Merkle log: recompute every leaf hash and every perfect subtree from
 * the leaf inputs (streamed in batches), compare them with the stored nodes, and compare the
 * recomputed roots with stored checkpoints (record fields, note body and, when a key is
 * given, the note signature). Any disagreement is LOG_CORRUPT with details.
 */
import { bytesEqual } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { parseCheckpoint } from '../../core/merkle/checkpoint.js';
import {
  type Frontier,
  type MerkleNode,
  EMPTY_FRONTIER,
  appendToFrontier,
  frontierRoot,
} from '../../core/merkle/frontier.js';
import { emptyRoot, leafHash } from '../../core/merkle/hash.js';
import { type NoteVerifyFn, parseNote, verifyNote } from '../../core/merkle/note.js';
import type { CheckpointRecord, LogStore } from '../../ports/storage.js';

export interface AuditOptions {
  /** Extra checkpoint sizes to check besides the latest stored checkpoint. */
  readonly checkpointSizes?: readonly number[];
  /** Verify checkpoint signatures under this key (else only the note body is checked). */
  readonly checkpointKey?: {
    readonly keyName: string;
    readonly publicKey: Uint8Array;
    readonly verify: NoteVerifyFn;
  };
  /** Leaves read per `getLeaves` call. Default 4096. */
  readonly batchSize?: number;
}

export interface AuditReport {
  readonly size: number;
  readonly root: Uint8Array;
  readonly leavesChecked: number;
  readonly nodesChecked: number;
  readonly checkpointsChecked: number;
}

const corrupt = (message: string, details: Record<string, unknown>): MemwardenError =>
  new MemwardenError('LOG_CORRUPT', message, { details });

/**
 * Recompute the log in `store` and compare. `expected` is the frontier the caller holds in
 * memory (its size and hashes must match the recomputation too).
 */
export async function auditLog(
  store: LogStore,
  origin: string,
  expected: Frontier,
  opts: AuditOptions = {},
): Promise<AuditReport> {
  const size = await store.logSize();
  if (size !== expected.size)
    throw corrupt('stored size differs from the open log', { size, expected: expected.size });
  const batch = opts.batchSize ?? 4096;

  // Checkpoints to check, keyed by size.
  const cps = new Map<number, CheckpointRecord>();
  const latest = await store.latestCheckpoint();
  if (latest !== undefined) cps.set(latest.size, latest);
  for (const s of opts.checkpointSizes ?? []) {
    const cp = await store.getCheckpoint(s);
    if (cp === undefined) throw corrupt('requested checkpoint is missing', { size: s });
    cps.set(s, cp);
  }
  for (const cp of cps.values()) {
    if (cp.size > size) throw corrupt('checkpoint beyond the log', { size: cp.size });
  }

  let frontier = EMPTY_FRONTIER;
  let nodesChecked = 0;
  let checkpointsChecked = 0;
  const checkCp = (at: number, root: Uint8Array): void => {
    const cp = cps.get(at);
    if (cp === undefined) return;
    checkCheckpoint(cp, root, origin, opts.checkpointKey);
    checkpointsChecked++;
  };
  checkCp(0, emptyRoot());

  for (let start = 0; start < size; start += batch) {
    const end = Math.min(size, start + batch);
    const leaves = await store.getLeaves(start, end);
    if (leaves.length !== end - start)
      throw corrupt('leaves missing from the store', { start, end, got: leaves.length });
    const hashes = leaves.map((l, i) => {
      if (l.index !== start + i)
        throw corrupt('leaf stored at the wrong index', { index: start + i });
      const h = leafHash(l.data);
      if (!bytesEqual(h, l.hash))
        throw corrupt('stored leaf hash does not match its data', { index: l.index });
      return h;
    });
    // Advance leaf by leaf only where a checkpoint size falls inside this batch.
    let pos = 0;
    const stops = [...cps.keys()].filter((s) => s > start && s <= end).sort((a, b) => a - b);
    for (const stop of [...stops, end]) {
      if (stop - start <= pos) continue;
      const step = appendToFrontier(frontier, hashes.slice(pos, stop - start));
      await compareNodes(store, step.completed);
      nodesChecked += step.completed.length;
      frontier = step.frontier;
      pos = stop - start;
      if (cps.has(stop)) checkCp(stop, frontierRoot(frontier));
    }
  }

  const root = frontierRoot(frontier);
  for (let i = 0; i < expected.nodes.length; i++) {
    const a = expected.nodes[i] as MerkleNode;
    const b = frontier.nodes[i];
    if (
      b === undefined ||
      a.level !== b.level ||
      a.index !== b.index ||
      !bytesEqual(a.hash, b.hash)
    ) {
      throw corrupt('in-memory frontier differs from the recomputed tree', {
        level: a.level,
        index: a.index,
      });
    }
  }
  return { size, root, leavesChecked: size, nodesChecked, checkpointsChecked };
}

async function compareNodes(store: LogStore, nodes: readonly MerkleNode[]): Promise<void> {
  if (nodes.length === 0) return;
  const stored = await store.getNodes(nodes);
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i] as MerkleNode;
    const s = stored[i];
    if (s === undefined || !bytesEqual(s, n.hash)) {
      throw corrupt(s === undefined ? 'stored node missing' : 'stored node hash differs', {
        level: n.level,
        index: n.index,
      });
    }
  }
}

function checkCheckpoint(
  cp: CheckpointRecord,
  root: Uint8Array,
  origin: string,
  key: AuditOptions['checkpointKey'],
): void {
  const details = { size: cp.size };
  if (!bytesEqual(cp.root, root))
    throw corrupt('checkpoint root differs from the recomputed root', details);
  let body;
  try {
    body = parseCheckpoint(parseNote(cp.note).text);
    if (key !== undefined) verifyNote(cp.note, key.keyName, key.publicKey, key.verify);
  } catch (e) {
    throw new MemwardenError('LOG_CORRUPT', 'stored checkpoint note is malformed or unsigned', {
      cause: e,
      details,
    });
  }
  if (body.size !== cp.size || !bytesEqual(body.root, root) || body.origin !== origin) {
    throw corrupt('checkpoint note disagrees with its record', details);
  }
}
