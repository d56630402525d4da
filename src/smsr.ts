/**
 * @module smsr
 * `memwarden/smsr`: everything certified smoothed retrieval needs (SMSR, issue 19) in one
 * documented entry point — the smoothed search's vote helper, the certificate and planner,
 * the sampler and a word source over the host's CSPRNG, and the `SmoothedRetrieval` service
 * for callers who bring their own retriever, generator and judge.
 */
import { systemRandom } from './adapters/system/index.js';
import type { WordSource } from './core/smsr/index.js';
import { wordsFromRandomSource } from './memory/read/smsr.js';

export {
  DEFAULT_FLOOD_POLICY,
  FloodWindow,
  Verdicts,
  aggregateVerdicts,
  floodBudget,
  certificate,
  delta,
  planPoolSize,
  sampleSubset,
  type Certificate,
  type FloodBudget,
  type FloodPolicy,
  type Plan,
  type Verdict,
  type VerdictCounts,
  type WordSource,
} from './core/smsr/index.js';
export {
  SmoothedRetrieval,
  llmGenerator,
  llmJudge,
  macVerifiedRetriever,
  parseVerdict,
  renderContext,
  wordsFromRandomSource,
  type CandidateRetriever,
  type SmoothedAnswer,
  type SmsrCandidate,
  type SmsrGenerator,
  type SmsrJudge,
  type SmsrOptions,
  type SmsrRun,
} from './memory/read/smsr.js';
export {
  SMOOTHING_MAX_M,
  SMOOTHING_MAX_RUNS,
  certificateView,
  resolveSmoothing,
  voteSmoothed,
  type SmoothedVote,
  type SmoothingParams,
} from './memory/read/smoothing.js';
export type {
  SmoothedContext,
  SmoothingCertificate,
  SmoothingOptions,
  SmoothingResult,
} from './memory/api.js';

/** 32-bit words from the host's CSPRNG (`crypto.randomBytes`), buffered: production sampling. */
export function systemWords(): WordSource {
  return wordsFromRandomSource(systemRandom);
}
