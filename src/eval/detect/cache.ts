/**
 * @module eval/detect/cache
 * A disk cache of embeddings for the evaluation, so reruns skip the model: one file per model
 * (`<dir>/<model>.jsonl`, lines `{"k": sha256(text), "v": base64 float32}`), appended as new
 * texts are embedded. Only the harness uses it; the library's cache is in-memory.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../../ports/embedder.js';

export class DiskEmbeddingCache {
  readonly #inner: Embedder;
  readonly #file: string | undefined;
  readonly #map = new Map<string, Float32Array>();
  hits = 0;
  misses = 0;
  modelMs = 0;

  constructor(inner: Embedder, dir: string | undefined) {
    this.#inner = inner;
    if (dir === undefined) return;
    mkdirSync(dir, { recursive: true });
    this.#file = join(dir, `${inner.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.jsonl`);
    if (existsSync(this.#file)) {
      for (const line of readFileSync(this.#file, 'utf8').split('\n')) {
        if (line.length === 0) continue;
        try {
          const { k, v } = JSON.parse(line) as { k: string; v: string };
          const b = Buffer.from(v, 'base64');
          this.#map.set(
            k,
            new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)),
          );
        } catch {
          // A torn last line (interrupted run) is skipped; the text is embedded again.
        }
      }
    }
  }

  get name(): string {
    return this.#inner.name;
  }

  static key(text: string): string {
    return createHash('sha256').update(text).digest('hex');
  }

  readonly embed = async (texts: string[]): Promise<Float32Array[]> => {
    const keys = texts.map((t) => DiskEmbeddingCache.key(t));
    const missing: number[] = [];
    keys.forEach((k, i) => {
      if (!this.#map.has(k) && !missing.some((j) => keys[j] === k)) missing.push(i);
    });
    this.hits += texts.length - missing.length;
    this.misses += missing.length;
    if (missing.length > 0) {
      const t0 = performance.now();
      const vs = await this.#inner.embed(missing.map((i) => texts[i] as string));
      this.modelMs += performance.now() - t0;
      const lines: string[] = [];
      missing.forEach((i, j) => {
        const v = vs[j] as Float32Array;
        this.#map.set(keys[i] as string, v);
        lines.push(
          JSON.stringify({
            k: keys[i],
            v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'),
          }),
        );
      });
      if (this.#file !== undefined) appendFileSync(this.#file, `${lines.join('\n')}\n`);
    }
    return keys.map((k) => this.#map.get(k) as Float32Array);
  };
}
