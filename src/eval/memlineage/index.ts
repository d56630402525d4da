/**
 * @module eval/memlineage
 * The MemLineage evaluation harness (§5–§6): attack adapters, defence profiles, deterministic
 * agents, the banking environment, every table, the issue 18 adaptive-attacker suite (attack
 * specs as data, `runAdaptiveSuite`), and the artifacts of a run. Importable as
 * `memwarden/eval/memlineage` (see eval/README.md).
 */
export { adaptiveText, artifacts, csv, llmMatrixCsv, summary, PAPER } from './artifacts.js';
export {
  ADAPTIVE_SUITE,
  BENIGN_SUITE,
  Channels,
  adaptiveProfiles,
  parseAttackSpecs,
  runAdaptiveSuite,
  runSpec,
  type AblationRow,
  type AdaptiveCell,
  type AdaptiveOptions,
  type AdaptiveResults,
  type AttackSpec,
  type Channel,
} from './adaptive.js';
export { BANKING_FAMILIES, runBankingAdaptive } from './banking.js';
export { LlmAgent, ScriptedAgent, ScheduleJudge, type Agent, type AgentTurn } from './agents.js';
export { AttackNames, runAttack, type AttackName, type AttackOutcome } from './attacks.js';
export {
  Mechanisms,
  ProfileNames,
  profile,
  type Mechanism,
  type Profile,
  type ProfileName,
} from './profiles.js';
export {
  runMemLineage,
  runLlmMatrix,
  runLlmTrials,
  wilson,
  type LlmTrialCell,
  type Results,
  type RunOptions,
} from './run.js';
export { writeArtifacts } from './write.js';
