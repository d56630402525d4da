/**
 * @module eval/injections
 * The write screen on public prompt-injection corpora (issue 22, `memwarden eval injections`)
 * and the instruction screen's training procedure.
 */
export { registerEvalInjections } from './cli.js';
export {
  runInjectionsEval,
  keywordFlag,
  TARGETS,
  TIERS,
  type InjectionsEvalOptions,
  type InjectionsEvalReport,
} from './run.js';
export { htmlReport, textSummary } from './report.js';
export {
  GROUPS,
  groupOf,
  groupInfo,
  readInjections,
  trainable,
  type InjectionRow,
} from './corpus.js';
export { trainingData, ownTexts, embedAll } from './data.js';
export {
  TIER_BUDGETS,
  fitLogistic,
  thresholdAtBudget,
  tierThresholds,
  trainModel,
  trainScreen,
  scoreExample,
  foldOf,
} from './train.js';
export { HANDWRITTEN_STATEMENTS, HANDWRITTEN_USER_REQUESTS } from './handwritten.js';
