/**
 * @module test/memory/helpers-logstore
 * A minimal Map-based LogStore for the log's unit tests (the real in-memory backend lives in
 * src/adapters/memory and has its own conformance suite). Keeps the port's rules that the log
 * relies on: sequenced atomic appends, no overwrites, copies out.
 */
import { MemwardenError } from '../../src/core/errors.js';
import type {
  CheckpointRecord,
  LeafRecord,
  LogStore,
  NodeRecord,
} from '../../src/ports/storage.js';

/** Numeric node key: exact for index < 2^46 and level < 64. */
const key = (level: number, index: number): number => index * 64 + level;

export class FakeLogStore implements LogStore {
  readonly leaves: LeafRecord[] = [];
  readonly nodes = new Map<number, Uint8Array>();
  readonly checkpoints = new Map<number, CheckpointRecord>();
  /** Every getNodes call's ref count, for asserting read patterns. */
  readonly nodeReads: number[] = [];

  async logSize(): Promise<number> {
    return this.leaves.length;
  }

  async appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    if (start !== this.leaves.length) throw new MemwardenError('STORAGE_CONFLICT', 'log moved');
    for (const n of nodes) {
      if (this.nodes.has(key(n.level, n.index)))
        throw new MemwardenError('STORAGE_CONFLICT', 'node exists');
    }
    for (const l of leaves) this.leaves.push(l);
    for (const n of nodes) this.nodes.set(key(n.level, n.index), n.hash);
  }

  async getLeaf(index: number): Promise<LeafRecord | undefined> {
    return this.leaves[index];
  }

  async getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    return this.leaves.slice(start, end);
  }

  async getNodes(
    refs: readonly { level: number; index: number }[],
  ): Promise<(Uint8Array | undefined)[]> {
    this.nodeReads.push(refs.length);
    return refs.map((r) => this.nodes.get(key(r.level, r.index)));
  }

  async findLeafIndex(entryId: string): Promise<number | undefined> {
    return this.leaves.find((l) => l.kind === 'entry' && l.entryId === entryId)?.index;
  }

  async putCheckpoint(cp: CheckpointRecord): Promise<void> {
    if (this.checkpoints.has(cp.size))
      throw new MemwardenError('STORAGE_CONFLICT', 'checkpoint exists');
    this.checkpoints.set(cp.size, cp);
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    let best: CheckpointRecord | undefined;
    for (const c of this.checkpoints.values())
      if (best === undefined || c.size > best.size) best = c;
    return best;
  }

  async getCheckpoint(size: number): Promise<CheckpointRecord | undefined> {
    return this.checkpoints.get(size);
  }
}
