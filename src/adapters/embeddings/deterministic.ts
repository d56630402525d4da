/**
 * @module adapters/embeddings/deterministic
 * A test double: feature-hashed bag of words, L2-normalised. Same text, same vector, on any
 * machine, in microseconds; texts sharing words score higher than texts that do not, which is
 * all ranking tests need. Not a semantic model (paraphrases with no shared word score ~0).
 */
import { assertTexts, type Embedder } from './types.js';
import { l2NormalizeInPlace } from './vector.js';

const WORD_RE = /[\p{L}\p{N}]+/gu;

/** 32-bit FNV-1a over UTF-16 code units: stable, fast, no dependencies. */
function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A crude stemmer so "memories"/"memory" and "running"/"run" share a feature. */
function stem(w: string): string {
  if (w.length > 5 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** Deterministic hashed bag-of-words vectors (default 384-d, matching the real model). */
export class DeterministicEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;

  constructor(dimensions = 384) {
    if (!Number.isInteger(dimensions) || dimensions < 8)
      throw new RangeError('dimensions must be an integer ≥ 8');
    this.dimensions = dimensions;
    this.name = `deterministic:bow-${dimensions}`;
  }

  /** Synchronous core, exposed for tests that need a vector without awaiting. */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const words = text.toLowerCase().match(WORD_RE) ?? [];
    // An empty text still gets a unit vector, so every output is normalised.
    const features = words.length === 0 ? [''] : words.map(stem);
    for (const f of features) {
      const h = fnv1a(f);
      const sign = fnv1a(f, 0x9747b28c) & 1 ? 1 : -1;
      const i = h % this.dimensions;
      v[i] = (v[i] as number) + sign;
    }
    return l2NormalizeInPlace(v);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    assertTexts(texts);
    return texts.map((t) => this.embedOne(t));
  }
}
