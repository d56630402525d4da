/**
 * @module core/text/formula
 * The BM25 formula's parts (Robertson & Zaragoza 2009; k1 = 1.2, b = 0.75, Lucene's
 * non-negative idf), apart from the index so that the index's search strategies
 * (`bm25.ts`, `maxscore.ts`) share one definition without importing each other.
 */

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Inverse document frequency (never negative). */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** The length normalisation of a document of `docLen` tokens. */
export function lengthNorm(docLen: number, avgLen: number): number {
  return BM25_K1 * (1 - BM25_B + (BM25_B * docLen) / (avgLen > 0 ? avgLen : 1));
}

/** One term's contribution: idf · f·(k1 + 1) / (f + norm). The one formula every path uses. */
export function termScore(termIdf: number, f: number, norm: number): number {
  return (termIdf * f * (BM25_K1 + 1)) / (f + norm);
}
