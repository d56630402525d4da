/**
 * @module adapters/embeddings
 * Embedders: the real local model, an OpenAI-compatible remote, a deterministic test double,
 * and an LRU cache in front of any of them.
 */
export {
  EMBEDDING_ERROR_CODE,
  embeddingError,
  type Embedder,
  type EmbeddingFailure,
} from './types.js';
export {
  LocalMiniLmEmbedder,
  LOCAL_MAX_BATCH,
  type LocalEmbedderStats,
  type LocalMiniLmOptions,
} from './local-minilm.js';
export { OpenAiCompatibleEmbedder, type OpenAiCompatibleOptions } from './openai-compatible.js';
export { DeterministicEmbedder } from './deterministic.js';
export { EmbeddingCache, type EmbeddingCacheOptions, type EmbeddingCacheStats } from './cache.js';
export { cosine, dot, l2Norm, l2NormalizeInPlace } from './vector.js';
