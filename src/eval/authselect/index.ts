/**
 * @module eval/authselect
 * The AuthSelect evaluation (issue 8): `runAuthSelectEval`, its report files and the CLI
 * subcommand registration.
 */
export {
  type AuthSelectEvalOptions,
  type AuthSelectEvalResult,
  type AuthSelectEvalSummary,
  type CriterionRow,
  type DefenceSummary,
  type EvalRow,
  type LedgerCase,
  type AttackerSummary,
  type RelianceRow,
  type RelianceSummary,
  DEFENCES,
  PAPER,
  TransferLedger,
  bAMemGuard,
  bSlm,
  runAuthSelectEval,
} from './run.js';
export { ATTACKERS, type Attacker } from './world.js';
export { ATTACK_ARMS, type AttackArm } from './attacks.js';
export { generateCorpus, type Corpus, type Question } from './corpus.js';
export { reportHtml, rowsCsv, writeAuthSelectReport } from './report.js';
export { registerEvalAuthselect } from './cli.js';
