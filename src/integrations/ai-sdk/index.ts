/**
 * @module integrations/ai-sdk
 * memwarden for Vercel AI SDK agents, in two lines:
 *
 *     const model = wrapLanguageModel({ model: base, middleware: memwardenMiddleware({ memory, principal }) });
 *     const tools = wrapToolsWithGate(myTools, gateFromMemory(memory, principal), mw);
 *
 * and certified smoothed answers (SMSR): `smoothedGenerateText({ model, memory, principal,
 * prompt, smoothing, judge: modelJudge(judgeModel) })`.
 */
export {
  DEFAULT_MEMORY_PREAMBLE,
  lastUserQuery,
  memwardenMiddleware,
  type MemwardenMiddleware,
  type MemwardenMiddlewareOptions,
  type ModelCallParams,
  type Retrieval,
  type RememberOutcome,
} from './middleware.js';
export { gateFromMemory } from './gate.js';
export {
  modelJudge,
  smoothedGenerateText,
  type AnswerJudge,
  type SmoothedGenerateOptions,
  type SmoothedGenerateResult,
  type SmoothedRunAnswer,
} from './smoothed.js';
export {
  contextFromRetrieval,
  lastUserText,
  memwardenToolApproval,
  wrapToolsWithGate,
  type RetrievalSource,
  type ActionGate,
  type GateCall,
  type GateContext,
  type GateVerdict,
  type GateVerdictKind,
  type GetGateContext,
  type NeedsApproval,
  type NeedsApprovalOptions,
  type ToolApprovalOptions,
  type ToolCallInfo,
} from './tool-approval.js';
