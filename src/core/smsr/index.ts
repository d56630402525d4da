/**
 * @module core/smsr
 * SMSR component 2, pure parts: the Theorem 2 certificate and parameter selection, uniform
 * subset sampling, verdict aggregation, Wilson intervals and the near-duplicate control.
 */
export {
  binomial,
  certificate,
  checkParams,
  delta,
  pCleanExact,
  planPoolSize,
  rationalToNumber,
  type Certificate,
  type Plan,
  type Rational,
} from './certificate.js';
export { SeededWords, sampleSubset, uniformBelow, type WordSource } from './sampling.js';
export {
  Verdicts,
  aggregateVerdicts,
  stringVote,
  type Aggregate,
  type Verdict,
  type VerdictCounts,
} from './aggregate.js';
export { wilson, type Interval } from './stats.js';
export { cosine, nearDuplicate, type NearDuplicate } from './near-duplicate.js';
export {
  DEFAULT_FLOOD_POLICY,
  FloodWindow,
  floodBudget,
  type FloodBudget,
  type FloodCheck,
  type FloodPolicy,
} from './flood.js';
