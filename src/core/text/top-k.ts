/**
 * @module core/text/top-k
 * The best `k` (score, key) pairs of a stream, best first, ties by the smaller key: a bounded
 * min-heap on (score, −key) in two typed arrays. Shared by the lexical index's exhaustive and
 * pruned searches (ADR 0074, ADR 0090) so both keep and order documents by the same rule.
 */
import { descending } from '../compare.js';

export class TopK {
  private readonly hs: Float64Array;
  private readonly hk: Float64Array;
  size = 0;

  constructor(readonly k: number) {
    this.hs = new Float64Array(k);
    this.hk = new Float64Array(k);
  }

  /**
   * The worst kept score once `k` are kept, else 0 (every score offered is > 0). A document
   * scoring below it cannot enter; one scoring exactly it can, with a smaller key.
   */
  get threshold(): number {
    return this.size === this.k ? (this.hs[0] as number) : 0;
  }

  /** Whether (score, key) would be kept: the heap is not full, or it beats the worst kept. */
  wouldEnter(score: number, key: number): boolean {
    if (this.size < this.k) return true;
    const ws = this.hs[0] as number;
    return score > ws || (score === ws && key < (this.hk[0] as number));
  }

  /** Keep (score, key); the caller has checked {@link wouldEnter}. */
  push(score: number, key: number): void {
    const hs = this.hs;
    const hk = this.hk;
    if (this.size < this.k) {
      let i = this.size++;
      // Sift up: the parent is worse than the new pair → move the parent down.
      while (i > 0) {
        const up = (i - 1) >> 1;
        const ps = hs[up] as number;
        if (!(score < ps || (score === ps && key > (hk[up] as number)))) break;
        hs[i] = ps;
        hk[i] = hk[up] as number;
        i = up;
      }
      hs[i] = score;
      hk[i] = key;
      return;
    }
    // Replace the worst and sift down.
    const size = this.size;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      let m = l;
      if (r < size) {
        const rs = hs[r] as number;
        const ls = hs[l] as number;
        if (rs < ls || (rs === ls && (hk[r] as number) > (hk[l] as number))) m = r;
      }
      const ms = hs[m] as number;
      if (!(ms < score || (ms === score && (hk[m] as number) > key))) break;
      hs[i] = ms;
      hk[i] = hk[m] as number;
      i = m;
    }
    hs[i] = score;
    hk[i] = key;
  }

  /** The kept pairs, best first, ties by the smaller key. */
  results(): { key: number; score: number }[] {
    const out: { key: number; score: number }[] = [];
    for (let i = 0; i < this.size; i++)
      out.push({ key: this.hk[i] as number, score: this.hs[i] as number });
    out.sort((a, b) => descending(a.score, b.score) || a.key - b.key);
    return out;
  }
}
