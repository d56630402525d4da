/**
 * @module eval/smsr
 * The SMSR evaluation harness (`memwarden eval smsr`).
 */
export {
  Modes,
  heuristicAdmits,
  referenceJudge,
  runSmsrEval,
  worstCaseAgent,
  type AttackCell,
  type CertCell,
  type Mode,
  type SmsrEvalOptions,
  type SmsrEvalSummary,
} from './harness.js';
export { toCsv, toHtml, writeSmsrReport } from './report.js';
export {
  AttackClasses,
  SCENARIOS,
  attackTexts,
  type AttackClass,
  type Scenario,
} from './scenarios.js';
