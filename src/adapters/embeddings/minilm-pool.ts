/**
 * @module adapters/embeddings/minilm-pool
 * The engines that run all-MiniLM-L6-v2 for {@link LocalMiniLmEmbedder} (issue 20, ADR 0064).
 *
 * `@lat.md/embed`'s candle→WASM engine is single-threaded and synchronous: one forward pass
 * blocks its thread for tens of milliseconds. Its own `createEmbedder` runs small jobs inline,
 * one text per pass, and for 24+ texts spawns fresh workers that each reload the weights. Here
 * the same engine (`dist/engine.cjs` of the exactly pinned 0.2.0) is driven directly:
 * - `threads` ≥ 1: that many worker threads, started once per process and model and shared by
 *   every embedder instance, each holding one engine; batches go to whichever worker is free,
 *   results are put back by index. The event loop never runs a forward pass, and a batch uses
 *   every core. Idle workers are unref'd, so they never keep a process alive.
 * - `threads` = 0: one engine on the calling thread (the behaviour before ADR 0064).
 * An engine embeds a batch of texts in one padded forward pass; with a padding mask the
 * vector of a text does not depend on its batch-mates (the test checks it against one-by-one).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ModelManifest } from '@lat.md/embed';
import { embeddingError } from './types.js';

/** The wasm-bindgen engine class of `@lat.md/embed` (its `dist/engine.cjs`). */
interface WasmEngine {
  embed(texts: string[]): number[][];
}
type WasmEngineClass = new (
  weights: Uint8Array,
  tokenizer: Uint8Array,
  config: Uint8Array,
  maxTokens: number,
) => WasmEngine;

/** Where `@lat.md/embed`'s engine glue is (the package exports no path to it). */
export function enginePath(): string {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths('@lat.md/embed') ?? []) {
    const p = path.join(dir, '@lat.md', 'embed', 'dist', 'engine.cjs');
    if (existsSync(p)) return p;
  }
  throw embeddingError('model_failed', 'the @lat.md/embed engine is not installed');
}

/** Something that embeds a batch into one flat Float32Array (n × dimensions). */
export interface EngineRunner {
  run(texts: readonly string[]): Promise<Float32Array>;
}

function flatten(raw: number[][], n: number, dims: number): Float32Array {
  if (!Array.isArray(raw) || raw.length !== n)
    throw embeddingError(
      'response_invalid',
      'the local model returned the wrong number of vectors',
    );
  const out = new Float32Array(n * dims);
  raw.forEach((v, i) => {
    if (!Array.isArray(v) || v.length !== dims)
      throw embeddingError(
        'dimension_mismatch',
        `the local model returned a vector that is not ${dims}-d`,
      );
    out.set(v, i * dims);
  });
  return out;
}

/** One engine on the calling thread. */
export function inlineRunner(model: ModelManifest): EngineRunner {
  const require = createRequire(import.meta.url);
  const { Embedder } = require(enginePath()) as { Embedder: WasmEngineClass };
  const engine = new Embedder(
    new Uint8Array(readFileSync(model.weightsPath)),
    new Uint8Array(readFileSync(model.tokenizerPath)),
    new Uint8Array(readFileSync(model.configPath)),
    model.maxTokens,
  );
  engine.embed(['warm up']);
  return {
    run: (texts) => {
      try {
        return Promise.resolve(flatten(engine.embed([...texts]), texts.length, model.dimensions));
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
}

/**
 * The worker's code (CommonJS, run with `eval`, so it needs no file of its own in dist/ or
 * src/): load the engine from the paths in workerData, embed each batch it is sent and
 * transfer the vectors back as one flat Float32Array.
 */
const WORKER_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
let engine;
try {
  const { Embedder } = require(w.enginePath);
  engine = new Embedder(new Uint8Array(readFileSync(w.weightsPath)),
    new Uint8Array(readFileSync(w.tokenizerPath)), new Uint8Array(readFileSync(w.configPath)),
    w.maxTokens);
  engine.embed(['warm up']);
  parentPort.postMessage({ ready: true });
} catch (e) {
  parentPort.postMessage({ ready: false, error: String((e && e.message) || e) });
}
parentPort.on('message', ({ id, texts }) => {
  try {
    const raw = engine.embed(texts);
    if (!Array.isArray(raw) || raw.length !== texts.length) throw new Error('wrong count');
    const out = new Float32Array(texts.length * w.dimensions);
    raw.forEach((v, i) => {
      if (!Array.isArray(v) || v.length !== w.dimensions) throw new Error('wrong dimensions');
      out.set(v, i * w.dimensions);
    });
    parentPort.postMessage({ id, out }, [out.buffer]);
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

interface Job {
  readonly id: number;
  readonly texts: readonly string[];
  resolve(v: Float32Array): void;
  reject(e: unknown): void;
}

interface Slot {
  readonly worker: Worker;
  busy: Job | undefined;
}

/** A fixed set of worker threads, each with one engine, taking batches from one queue. */
class WorkerPool implements EngineRunner {
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 0;
  #pending = 0;
  #dead: unknown;
  readonly ready: Promise<void>;
  readonly #onDead: () => void;

  constructor(model: ModelManifest, threads: number, onDead: () => void) {
    this.#onDead = onDead;
    const workerData = {
      enginePath: enginePath(),
      weightsPath: model.weightsPath,
      tokenizerPath: model.tokenizerPath,
      configPath: model.configPath,
      maxTokens: model.maxTokens,
      dimensions: model.dimensions,
    };
    const readies: Promise<void>[] = [];
    for (let k = 0; k < threads; k++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
      const slot: Slot = { worker, busy: undefined };
      this.#slots.push(slot);
      readies.push(
        new Promise<void>((resolve, reject) => {
          worker.once('message', (m: { ready: boolean; error?: string }) => {
            if (m.ready) resolve();
            else reject(new Error(m.error));
          });
          worker.once('error', reject);
        }),
      );
      worker.on('message', (m: { id?: number; out?: Float32Array; error?: string }) => {
        const job = slot.busy;
        if (m.id === undefined || job === undefined || job.id !== m.id) return;
        slot.busy = undefined;
        this.#settle();
        if (m.out !== undefined) job.resolve(m.out);
        else
          job.reject(
            embeddingError('model_failed', 'the local embedding model failed', {
              cause: new Error(m.error),
            }),
          );
        this.#pump();
      });
      worker.on('error', (e) => this.#fail(e));
      worker.on('exit', (code) => this.#fail(new Error(`embedding worker exited (${code})`)));
    }
    this.ready = Promise.all(readies).then(
      () => {
        this.#refs(false);
      },
      (e: unknown) => {
        this.#fail(e);
        throw e;
      },
    );
    this.#refs(true); // loading: keep the process up until the engines are ready
  }

  run(texts: readonly string[]): Promise<Float32Array> {
    if (this.#dead !== undefined)
      return Promise.reject(
        embeddingError('model_failed', 'the local embedding model failed', { cause: this.#dead }),
      );
    return new Promise((resolve, reject) => {
      if (this.#pending++ === 0) this.#refs(true);
      this.#queue.push({ id: this.#nextId++, texts, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    for (const slot of this.#slots) {
      if (slot.busy !== undefined) continue;
      const job = this.#queue.shift();
      if (job === undefined) return;
      slot.busy = job;
      slot.worker.postMessage({ id: job.id, texts: job.texts });
    }
  }

  #settle(): void {
    if (--this.#pending === 0) this.#refs(false);
  }

  #refs(on: boolean): void {
    for (const s of this.#slots) {
      if (on) s.worker.ref();
      else s.worker.unref();
    }
  }

  /** A worker died: fail every job, stop the others; the next embedder call starts anew. */
  #fail(e: unknown): void {
    if (this.#dead !== undefined) return;
    this.#dead = e;
    this.#onDead();
    const err = embeddingError('model_failed', 'the local embedding model failed', { cause: e });
    const jobs = [...this.#queue.splice(0), ...this.#slots.flatMap((s) => s.busy ?? [])];
    for (const s of this.#slots) {
      s.busy = undefined;
      void s.worker.terminate();
    }
    this.#pending = 0;
    for (const j of jobs) j.reject(err);
  }
}

/**
 * Pools by model files and thread count: one per process, however many embedders use it — kept
 * on globalThis, so a module loaded twice (a test runner's module isolation, two copies of the
 * package) still shares the workers instead of leaving idle ~90 MB engines behind.
 */
const POOLS = Symbol.for('memwarden.minilm.pools');
const pools: Map<string, Promise<WorkerPool>> = ((globalThis as Record<symbol, unknown>)[POOLS] ??=
  new Map()) as Map<string, Promise<WorkerPool>>;

/** The shared pool of `threads` workers for `model`, its engines loaded. */
export function workerPool(model: ModelManifest, threads: number): Promise<EngineRunner> {
  const key = JSON.stringify([model.weightsPath, model.tokenizerPath, model.configPath, threads]);
  let p = pools.get(key);
  if (p === undefined) {
    const pool = new WorkerPool(model, threads, () => {
      if (pools.get(key) === p) pools.delete(key);
    });
    p = pool.ready.then(() => pool);
    pools.set(key, p);
    p.catch(() => {
      if (pools.get(key) === p) pools.delete(key);
    });
  }
  return p;
}
