/**
 * @module ports/llm
 * One provider interface for every LLM use: the attribution judge, fact extraction, the
 * SMSR verdict judge and the evaluated agent. Adapters: OpenAI-compatible endpoints (OpenAI,
 * vLLM, Ollama), Anthropic, and scripted deterministic models for tests and the harness.
 *
 * Error contract (MemLineage §4.3): a failure to reach the model (network, timeout, 5xx,
 * rate limit) is `LLM_TRANSPORT` — transient, callers may take their safe outcome; a response
 * that arrived but does not have the promised shape is `LLM_MALFORMED` — never transient,
 * callers fail closed.
 */

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** A tool the model may call (JSON-Schema parameters). */
export interface ToolSpec {
  readonly name: string;
  readonly description?: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface LlmRequest {
  readonly messages: readonly ChatMessage[];
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Ask for a JSON object response (providers that support it enforce it). */
  readonly json?: boolean;
  readonly tools?: readonly ToolSpec[];
  readonly signal?: AbortSignal;
}

export interface LlmResponse {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly model?: string;
}

export interface LlmProvider {
  /** e.g. `openai-compatible:gpt-4o-mini`, `scripted:judge`. */
  readonly name: string;
  generate(req: LlmRequest): Promise<LlmResponse>;
}
