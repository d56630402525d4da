/**
 * @module testing/llm
 * LLM test doubles: a scripted deterministic provider and a protocol-level mock of an
 * OpenAI-compatible HTTP endpoint.
 */
export {
  startMockOpenAiServer,
  type MockOpenAiServer,
  type MockOpenAiServerOptions,
  type RecordedRequest,
} from './mock-openai-server.js';
export {
  type MockChatReply,
  type MockChatRequest,
  type MockEmbeddingsReply,
  type MockEmbeddingsRequest,
  type MockFailure,
  type MockToolCall,
} from './mock-openai-wire.js';
export {
  ScriptedModel,
  type LlmScript,
  type ScriptedModelOptions,
  type ScriptedReply,
} from './scripted.js';
