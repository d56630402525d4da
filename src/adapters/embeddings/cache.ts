/**
 * @module adapters/embeddings/cache
 * An LRU cache in front of any embedder. Query embeddings repeat (the same question asked
 * again, retries), and the model's time should be reported apart from search time
 * (issue 3, "Performance"): `stats()` reports hits, misses and the milliseconds spent in the
 * wrapped model only.
 *
 * Vectors are copied in and out, so a caller that mutates a result cannot poison the cache.
 */
import { MemwardenError } from '../../core/errors.js';
import { assertTexts, embeddingError, type Embedder } from './types.js';

export interface EmbeddingCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
  /** Calls made to the wrapped model and the milliseconds they took in total. */
  readonly modelCalls: number;
  readonly modelMs: number;
}

export interface EmbeddingCacheOptions {
  /** Most entries kept (default 1,000). */
  readonly maxEntries?: number;
  /** Texts longer than this many UTF-16 units are embedded but not cached (default 8,192). */
  readonly maxTextLength?: number;
  /** Called after each model call with its duration, e.g. to feed a histogram. */
  readonly onModelTime?: (ms: number, texts: number) => void;
}

/** LRU-cached embedder; same `name` and `dimensions` as the one it wraps. */
export class EmbeddingCache implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  readonly #inner: Embedder;
  readonly #max: number;
  readonly #maxLen: number;
  readonly #onModelTime: ((ms: number, texts: number) => void) | undefined;
  /** Map iteration order is insertion order: the first key is the least recently used. */
  readonly #lru = new Map<string, Float32Array>();
  #hits = 0;
  #misses = 0;
  #modelCalls = 0;
  #modelMs = 0;

  constructor(inner: Embedder, opts: EmbeddingCacheOptions = {}) {
    const max = opts.maxEntries ?? 1_000;
    if (!Number.isInteger(max) || max < 1)
      throw new MemwardenError('INPUT_INVALID', 'maxEntries must be a positive integer');
    this.#inner = inner;
    this.name = inner.name;
    this.dimensions = inner.dimensions;
    this.#max = max;
    this.#maxLen = opts.maxTextLength ?? 8_192;
    this.#onModelTime = opts.onModelTime;
  }

  stats(): EmbeddingCacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      size: this.#lru.size,
      modelCalls: this.#modelCalls,
      modelMs: this.#modelMs,
    };
  }

  clear(): void {
    this.#lru.clear();
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    assertTexts(texts);
    const out = new Array<Float32Array | undefined>(texts.length).fill(undefined);
    const missing: string[] = [];
    const missingAt = new Map<string, number[]>();
    texts.forEach((t, i) => {
      const hit = this.#lru.get(t);
      if (hit !== undefined) {
        this.#hits++;
        this.#lru.delete(t);
        this.#lru.set(t, hit); // refresh recency
        out[i] = hit.slice();
        return;
      }
      this.#misses++;
      const at = missingAt.get(t);
      if (at === undefined) {
        missingAt.set(t, [i]);
        missing.push(t); // a text repeated within one call is embedded once
      } else at.push(i);
    });
    if (missing.length > 0) {
      const t0 = performance.now();
      const vectors = await this.#inner.embed(missing);
      const ms = performance.now() - t0;
      this.#modelCalls++;
      this.#modelMs += ms;
      this.#onModelTime?.(ms, missing.length);
      if (vectors.length !== missing.length) {
        throw embeddingError(
          'response_invalid',
          'the wrapped embedder returned the wrong number of vectors',
        );
      }
      missing.forEach((t, k) => {
        const v = vectors[k] as Float32Array;
        for (const i of missingAt.get(t) ?? []) out[i] = v.slice();
        if (t.length <= this.#maxLen) this.#remember(t, v.slice());
      });
    }
    return out as Float32Array[];
  }

  #remember(text: string, v: Float32Array): void {
    this.#lru.delete(text);
    this.#lru.set(text, v);
    while (this.#lru.size > this.#max) {
      const oldest = this.#lru.keys().next();
      if (oldest.done === true) break;
      this.#lru.delete(oldest.value);
    }
  }
}
