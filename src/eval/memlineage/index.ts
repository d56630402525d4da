/**
 * @module eval/memlineage
 * The MemLineage evaluation harness (§5–§6): attack adapters, defence profiles, deterministic
 * agents, the banking environment, every table, and the artifacts of a run.
 */
export { artifacts, csv, summary, PAPER } from './artifacts.js';
export { LlmAgent, ScriptedAgent, ScheduleJudge, type Agent, type AgentTurn } from './agents.js';
export { AttackNames, runAttack, type AttackName, type AttackOutcome } from './attacks.js';
export { ProfileNames, profile, type Profile, type ProfileName } from './profiles.js';
export { runMemLineage, runLlmMatrix, type Results, type RunOptions } from './run.js';
export { writeArtifacts } from './write.js';
