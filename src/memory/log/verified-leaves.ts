/**
 * @module memory/log/verified-leaves
 * The verifier's leaf mirror: the hashes of the log's leaves [0, size), held in this process
 * after they were checked — all of them, folded into the RFC 6962 root — against a signed
 * checkpoint whose note signature the caller verified. With it, a first verification proves an
 * entry's log inclusion with one leaf hash and a 32-byte comparison instead of an audit path
 * read from the database and hashed per entry (MemLineage §3.6 step 2, amortised).
 *
 * Trust: nothing read from the store is used until the fold of [0, n) matches a signed root.
 * The mirror grows by reading only the new leaves [size, n) and appending them to the frontier
 * of the verified prefix, so catching up with a newer checkpoint costs one read and about one
 * hash per new leaf. If the stored leaf hashes disagree with the signed root (a tampered or
 * missing row), the mirror stays where it was and says so; the caller falls back to per-entry
 * audit paths, which find exactly the entries that cannot be proven. A failed size is not
 * retried until a newer checkpoint arrives.
 *
 * Cost: 32 bytes per leaf (3.2 MB per 100,000 entries, growing by doubling), and one pass of
 * about one SHA-256 per leaf when first filled; `maxLeaves` caps it (beyond the cap every
 * verification uses audit paths).
 */
import { bytesEqual } from '../../core/bytes.js';
import {
  type ChainHash,
  EMPTY_ROOT,
  HASH_SIZE,
  chainBytes,
  chainNode,
} from '../../core/merkle/hash.js';
import type { LogStore } from '../../ports/storage.js';

/** One perfect subtree root of the verified prefix's frontier. */
interface Peak {
  readonly level: number;
  readonly hash: ChainHash;
}

/** Leaves read per storage call while catching up (2 MiB of hashes). */
const CHUNK = 65_536;

/** Default cap: 2^22 leaves (128 MiB of hashes). */
export const DEFAULT_MAX_MIRROR_LEAVES = 4_194_304;

/** The verified leaf hashes of one log. */
export class VerifiedLeaves {
  private buf = new Uint8Array(0);
  private n = 0;
  private peaks: Peak[] = [];
  /** A checkpoint size the stored leaves failed to match: not retried. */
  private failedSize = -1;
  private pending: Promise<boolean> | undefined;
  private pendingSize = -1;

  constructor(
    private readonly store: LogStore,
    private readonly maxLeaves: number = DEFAULT_MAX_MIRROR_LEAVES,
  ) {}

  /** Number of leaves verified. */
  get size(): number {
    return this.n;
  }

  /** Bytes held for leaf hashes (capacity, not just the used part). */
  get bytes(): number {
    return this.buf.length;
  }

  /**
   * Is `hash` (bytes, or a latin1 chain string) the verified hash of leaf `index`? `undefined`
   * when the mirror does not reach `index` (the caller proves it another way).
   */
  matches(index: number, hash: ChainHash): boolean | undefined {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.n) return undefined;
    if (hash.length !== HASH_SIZE) return false;
    const o = index * HASH_SIZE;
    const b = this.buf;
    if (typeof hash === 'string') {
      for (let i = 0; i < HASH_SIZE; i++) if (b[o + i] !== hash.charCodeAt(i)) return false;
    } else for (let i = 0; i < HASH_SIZE; i++) if (b[o + i] !== hash[i]) return false;
    return true;
  }

  /**
   * Catch up with a signed checkpoint (`size` leaves, root `root`; the caller verified its note).
   * True when the mirror now covers [0, size); false when the stored leaves do not fold to
   * `root` (nothing changes), or when `size` is beyond the cap. Concurrent calls share one read.
   */
  async extendTo(size: number, root: Uint8Array): Promise<boolean> {
    if (size <= this.n) return true;
    if (size > this.maxLeaves || size === this.failedSize) return false;
    while (this.pending !== undefined) {
      const target = this.pendingSize;
      const ok = await this.pending;
      if (target >= size) return ok && this.n >= size;
    }
    if (size <= this.n) return true;
    this.pendingSize = size;
    this.pending = this.extendNow(size, root).finally(() => {
      this.pending = undefined;
      this.pendingSize = -1;
    });
    return this.pending;
  }

  private async extendNow(size: number, root: Uint8Array): Promise<boolean> {
    const start = this.n;
    const fresh = new Uint8Array((size - start) * HASH_SIZE);
    for (let at = start; at < size; at += CHUNK) {
      const end = Math.min(size, at + CHUNK);
      const got = await this.read(at, end);
      if (got.length !== (end - at) * HASH_SIZE) return this.fail(size);
      fresh.set(got, (at - start) * HASH_SIZE);
    }
    const peaks = this.peaks.slice();
    for (let o = 0; o < fresh.length; o += HASH_SIZE) {
      let node: Peak = { level: 0, hash: fresh.subarray(o, o + HASH_SIZE) };
      // Merge equal-sized neighbours: the binary carry of count + 1 (core/merkle/frontier).
      for (;;) {
        const top = peaks[peaks.length - 1];
        if (top === undefined || top.level !== node.level) break;
        peaks.pop();
        node = { level: node.level + 1, hash: chainNode(top.hash, node.hash) };
      }
      peaks.push(node);
    }
    if (!bytesEqual(foldPeaks(peaks), root)) return this.fail(size);
    this.ensureCapacity(size);
    this.buf.set(fresh, start * HASH_SIZE);
    this.n = size;
    // Keep peaks as bytes: a latin1 chain string is fine too, but bytes do not pin the slab.
    this.peaks = peaks.map((p) => ({ level: p.level, hash: chainBytes(p.hash).slice() }));
    return true;
  }

  private fail(size: number): false {
    this.failedSize = size;
    return false;
  }

  private async read(start: number, end: number): Promise<Uint8Array> {
    if (this.store.getLeafHashes !== undefined) return this.store.getLeafHashes(start, end);
    const leaves = await this.store.getLeaves(start, end);
    const out = new Uint8Array(leaves.length * HASH_SIZE);
    let o = 0;
    for (const l of leaves) {
      if (l.hash.length !== HASH_SIZE) continue;
      out.set(l.hash, o);
      o += HASH_SIZE;
    }
    return out.subarray(0, o);
  }

  private ensureCapacity(leaves: number): void {
    const need = leaves * HASH_SIZE;
    if (need <= this.buf.length) return;
    const cap = Math.min(Math.max(need, this.buf.length * 2), this.maxLeaves * HASH_SIZE);
    const next = new Uint8Array(Math.max(cap, need));
    next.set(this.buf.subarray(0, this.n * HASH_SIZE));
    this.buf = next;
  }
}

/** MTH from the frontier peaks: the right fold (RFC 9162 §2.1.1); SHA-256("") when empty. */
function foldPeaks(peaks: readonly Peak[]): Uint8Array {
  if (peaks.length === 0) return EMPTY_ROOT;
  let h: ChainHash = (peaks[peaks.length - 1] as Peak).hash;
  for (let i = peaks.length - 2; i >= 0; i--) h = chainNode((peaks[i] as Peak).hash, h);
  return chainBytes(h);
}
