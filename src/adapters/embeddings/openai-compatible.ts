/**
 * @module adapters/embeddings/openai-compatible
 * A remote embedder speaking the OpenAI embeddings protocol (`POST {baseUrl}/embeddings` with
 * `{ model, input }` and a bearer key) — OpenAI itself, or any compatible gateway or local
 * server. The response is untrusted input: it is validated strictly (count, indices, width,
 * finite numbers) and any deviation is a coded error, never a silently wrong vector.
 * Errors never carry the API key or the input text.
 */
import { MemwardenError } from '../../core/errors.js';
import { assertTexts, embeddingError, type Embedder } from './types.js';

export interface OpenAiCompatibleOptions {
  /** API root, e.g. `https://api.openai.com/v1` (no trailing `/embeddings`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  /** Expected vector width; every returned vector must have exactly this many values. */
  readonly dimensions: number;
  /** Texts per request (default 64). */
  readonly batchSize?: number;
  /** Per-request timeout in milliseconds (default 30 s). */
  readonly timeoutMs?: number;
  /** Largest response body accepted, in bytes (default 32 MiB). */
  readonly maxResponseBytes?: number;
  /** Injected for tests; default the global `fetch`. */
  readonly fetch?: typeof fetch;
}

/** The OpenAI embeddings protocol over `fetch`. */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  readonly #url: string;
  readonly #key: string;
  readonly #model: string;
  readonly #batch: number;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #fetch: typeof fetch;

  constructor(opts: OpenAiCompatibleOptions) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch (e) {
      throw new MemwardenError('INPUT_INVALID', 'baseUrl is not a URL', { cause: e });
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') {
      throw new MemwardenError('INPUT_INVALID', 'baseUrl must be http(s)');
    }
    if (typeof opts.apiKey !== 'string' || opts.apiKey.length === 0 || /[\r\n]/.test(opts.apiKey)) {
      throw new MemwardenError('INPUT_INVALID', 'apiKey must be a non-empty single-line string');
    }
    if (typeof opts.model !== 'string' || opts.model.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'model must be a non-empty string');
    }
    if (!Number.isInteger(opts.dimensions) || opts.dimensions < 1) {
      throw new MemwardenError('INPUT_INVALID', 'dimensions must be a positive integer');
    }
    const batch = opts.batchSize ?? 64;
    if (!Number.isInteger(batch) || batch < 1 || batch > 2048) {
      throw new MemwardenError('INPUT_INVALID', 'batchSize must be an integer in 1..2048');
    }
    this.#url = `${base.href.replace(/\/+$/, '')}/embeddings`;
    this.#key = opts.apiKey;
    this.#model = opts.model;
    this.name = `openai-compatible:${opts.model}`;
    this.dimensions = opts.dimensions;
    this.#batch = batch;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#maxBytes = opts.maxResponseBytes ?? 32 * 1024 * 1024;
    this.#fetch = opts.fetch ?? fetch;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    assertTexts(texts);
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.#batch) {
      out.push(...(await this.#request(texts.slice(i, i + this.#batch))));
    }
    return out;
  }

  async #request(input: string[]): Promise<Float32Array[]> {
    let res: Response;
    try {
      res = await this.#fetch(this.#url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#key}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ model: this.#model, input }),
        signal: AbortSignal.timeout(this.#timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      const timeout = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
      throw embeddingError(
        timeout ? 'timeout' : 'network',
        'the embedding service could not be reached',
        { cause: e },
      );
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw embeddingError('auth', 'the embedding service rejected the API key', {
        details: { status: res.status },
      });
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw embeddingError('http_status', `the embedding service answered HTTP ${res.status}`, {
        details: { status: res.status },
      });
    }
    const body = await this.#readJson(res);
    return this.#parse(body, input.length);
  }

  async #readJson(res: Response): Promise<unknown> {
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > this.#maxBytes) {
      await res.body?.cancel();
      throw embeddingError('response_invalid', 'the embedding response is too large');
    }
    let text: string;
    try {
      const buf = await res.arrayBuffer();
      if (buf.byteLength > this.#maxBytes)
        throw embeddingError('response_invalid', 'the embedding response is too large');
      text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
    } catch (e) {
      if (e instanceof MemwardenError) throw e;
      throw embeddingError('response_invalid', 'the embedding response could not be read', {
        cause: e,
      });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw embeddingError('response_invalid', 'the embedding response is not JSON', { cause: e });
    }
  }

  /** `{ data: [{ index, embedding: number[] }, …] }`, exactly one item per input index. */
  #parse(body: unknown, n: number): Float32Array[] {
    const bad = (why: string): MemwardenError =>
      embeddingError('response_invalid', `malformed embedding response: ${why}`);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw bad('not an object');
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data)) throw bad('data is not an array');
    if (data.length !== n) throw bad(`expected ${n} embeddings, got ${data.length}`);
    const out = new Array<Float32Array | undefined>(n).fill(undefined);
    for (const item of data) {
      if (typeof item !== 'object' || item === null) throw bad('an item is not an object');
      const { index, embedding } = item as { index?: unknown; embedding?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n)
        throw bad('bad index');
      if (out[index] !== undefined) throw bad('duplicate index');
      if (!Array.isArray(embedding)) throw bad('embedding is not an array of numbers');
      if (embedding.length !== this.dimensions) {
        throw embeddingError(
          'dimension_mismatch',
          `expected ${this.dimensions}-d vectors, got ${embedding.length}`,
        );
      }
      const v = new Float32Array(this.dimensions);
      for (let i = 0; i < embedding.length; i++) {
        const x: unknown = embedding[i];
        if (typeof x !== 'number' || !Number.isFinite(x))
          throw bad('embedding is not an array of finite numbers');
        v[i] = x;
      }
      out[index] = v;
    }
    return out as Float32Array[];
  }
}
