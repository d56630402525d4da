/**
 * @module ports/embedder
 * Turns texts into fixed-width vectors; the read path ranks by their similarity. Adapters:
 * the local all-MiniLM-L6-v2 model (default), an OpenAI-compatible endpoint, and a
 * deterministic embedder for unit tests.
 */
export interface Embedder {
  /** Stable model identifier, stored beside vectors so a model change is detectable. */
  readonly name: string;
  /** Width of every vector `embed` returns. */
  readonly dimensions: number;
  /** One vector per input, in input order. An empty input yields an empty output. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
