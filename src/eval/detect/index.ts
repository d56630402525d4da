/**
 * @module eval/detect
 * The detection evaluation of issue 7 (`memwarden eval detect`).
 */
export { registerEvalDetect, makeEmbedder } from './cli.js';
export {
  runDetectEval,
  type DetectEvalOptions,
  type DetectEvalReport,
  ATTACKS,
  DEFENCES,
  PAPER,
} from './run.js';
export { htmlReport, textSummary, headline } from './report.js';
export { benignCorpus, benignQueries, CATEGORIES, VICTIM_QUERIES } from './corpus.js';
export { agentPoison, minja, injecmem, synonymAttack, SYNONYMS } from './attacks.js';
export { auroc, bootstrap, rocPoints, sessionsTo } from './metrics.js';
export { DiskEmbeddingCache } from './cache.js';
