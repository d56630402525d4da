/**
 * @module core/text
 * Lexical ranking (BM25) shared by every backend and the evaluation baselines.
 */
export {
  type Bm25Stats,
  BM25_B,
  BM25_K1,
  LexicalIndex,
  bm25,
  bm25Stats,
  combinedStats,
  idf,
  lengthNorm,
  queryTerms,
  termFrequencies,
  termScore,
  tokenize,
} from './bm25.js';
export {
  type Relation,
  relate,
  relateWords,
  relationKeys,
  relationKeysAndProbes,
  relationProbes,
  words,
} from './relate.js';
