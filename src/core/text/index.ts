/**
 * @module core/text
 * Lexical ranking (BM25) shared by every backend and the evaluation baselines.
 */
export * from './bm25.js';
export * from './relate.js';
