/**
 * @module adapters/llm
 * LLM providers implementing `ports/llm`: OpenAI-compatible endpoints and Anthropic, via the
 * Vercel AI SDK, with one error table (`LLM_TRANSPORT` / `LLM_UNAVAILABLE` / `LLM_MALFORMED`).
 */
export {
  AiSdkProvider,
  type AiSdkProviderConfig,
  type RemoteProviderOptions,
} from './ai-sdk-provider.js';
export { AnthropicProvider, type AnthropicProviderOptions } from './anthropic.js';
export { OPENAI_DEFAULT_BASE_URL, providerFromEnv, type ProviderFromEnvOptions } from './env.js';
export { toLlmError } from './errors.js';
export {
  OpenAiCompatibleProvider,
  type OpenAiCompatibleProviderOptions,
} from './openai-compatible.js';
