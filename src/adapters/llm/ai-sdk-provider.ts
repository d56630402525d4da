/**
 * @module adapters/llm/ai-sdk-provider
 * The shared body of every remote provider: one `LlmRequest` becomes one Vercel AI SDK
 * `generateText` call (a single step, no tool execution), and the result is validated
 * before it is returned. The model's output is untrusted input: tool-call arguments must be
 * JSON objects, JSON mode must yield a JSON object, and every failure is a coded error
 * (see `errors.ts`).
 */
import {
  type LanguageModel,
  type ModelMessage,
  type Tool,
  Output,
  generateText,
  jsonSchema,
  tool,
} from 'ai';
import { MemwardenError } from '../../core/errors.js';
import type { LlmProvider, LlmRequest, LlmResponse, ToolCall, ToolSpec } from '../../ports/llm.js';
import { toLlmError } from './errors.js';

/** Options shared by the remote providers. */
export interface RemoteProviderOptions {
  /** Per-request timeout in milliseconds (default 60 s); a timeout is `LLM_TRANSPORT`. */
  readonly timeoutMs?: number;
  /**
   * Retries inside the AI SDK on transient failures (default 0: callers own the retry policy,
   * and `LLM_TRANSPORT` tells them the failure was transient).
   */
  readonly maxRetries?: number;
  /** Injected for tests and proxies; default the global `fetch`. */
  readonly fetch?: typeof fetch;
}

/** How a concrete provider plugs into the shared body. */
export interface AiSdkProviderConfig {
  readonly name: string;
  /** The provider model; a string id would route through the AI gateway, so it is refused. */
  readonly model: Exclude<LanguageModel, string>;
  /** True when the endpoint enforces JSON mode itself (OpenAI `response_format`). */
  readonly nativeJson: boolean;
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

/** Appended as a system message in JSON mode when the endpoint cannot enforce it. */
const JSON_INSTRUCTION =
  'Respond with a single JSON object and nothing else: no prose, no code fences.';

export function validateTimeout(ms: number | undefined, fallback: number): number {
  const v = ms ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > 3_600_000) {
    throw new MemwardenError('INPUT_INVALID', 'timeoutMs must be an integer in 1..3600000');
  }
  return v;
}

export function validateRetries(n: number | undefined): number {
  const v = n ?? 0;
  if (!Number.isInteger(v) || v < 0 || v > 10) {
    throw new MemwardenError('INPUT_INVALID', 'maxRetries must be an integer in 0..10');
  }
  return v;
}

export function validateModelId(model: unknown): string {
  if (typeof model !== 'string' || model.length === 0 || model.length > 256) {
    throw new MemwardenError('INPUT_INVALID', 'model must be a non-empty string (≤ 256 chars)');
  }
  return model;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toToolSet(tools: readonly ToolSpec[]): Record<string, Tool> {
  const set: Record<string, Tool> = {};
  for (const t of tools) {
    if (Object.hasOwn(set, t.name))
      throw new MemwardenError('INPUT_INVALID', `duplicate tool name: ${t.name}`);
    // No `execute`: the SDK returns the calls instead of running them.
    set[t.name] = tool({
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: jsonSchema(t.parameters as Parameters<typeof jsonSchema>[0]),
    });
  }
  return set;
}

function toMessages(req: LlmRequest, addJsonInstruction: boolean): ModelMessage[] {
  const out: ModelMessage[] = req.messages.map((m) => ({ role: m.role, content: m.content }));
  if (addJsonInstruction) out.unshift({ role: 'system', content: JSON_INSTRUCTION });
  return out;
}

/** An `LlmProvider` backed by an AI SDK language model. */
export class AiSdkProvider implements LlmProvider {
  readonly name: string;
  readonly #cfg: AiSdkProviderConfig;

  constructor(cfg: AiSdkProviderConfig) {
    this.name = cfg.name;
    this.#cfg = cfg;
  }

  async generate(req: LlmRequest): Promise<LlmResponse> {
    if (!Array.isArray(req.messages) || req.messages.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'messages must be a non-empty array');
    }
    const tools =
      req.tools !== undefined && req.tools.length > 0 ? toToolSet(req.tools) : undefined;
    const json = req.json === true;
    const timeout = AbortSignal.timeout(this.#cfg.timeoutMs);
    const signal = req.signal === undefined ? timeout : AbortSignal.any([req.signal, timeout]);
    let result;
    try {
      result = await generateText({
        model: this.#cfg.model,
        messages: toMessages(req, json && !this.#cfg.nativeJson),
        allowSystemInMessages: true,
        maxRetries: this.#cfg.maxRetries,
        abortSignal: signal,
        ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
        ...(req.maxTokens === undefined ? {} : { maxOutputTokens: req.maxTokens }),
        ...(tools === undefined ? {} : { tools }),
        ...(json && this.#cfg.nativeJson ? { output: Output.json() } : {}),
      });
    } catch (e) {
      throw toLlmError(e, this.name);
    }
    const toolCalls: ToolCall[] = [];
    for (const call of result.toolCalls) {
      if (call.dynamic === true && call.invalid === true) {
        throw new MemwardenError('LLM_MALFORMED', 'model produced an invalid tool call', {
          cause: call.error,
          details: { provider: this.name },
        });
      }
      if (!isPlainObject(call.input)) {
        throw new MemwardenError('LLM_MALFORMED', 'tool-call arguments are not a JSON object', {
          details: { provider: this.name },
        });
      }
      toolCalls.push({ name: call.toolName, arguments: call.input });
    }
    if (json && toolCalls.length === 0) assertJsonObject(result.text, this.name);
    return { text: result.text, toolCalls, model: result.response.modelId };
  }
}

/** JSON mode promises a JSON object; anything else is a malformed response (fail closed). */
function assertJsonObject(text: string, provider: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new MemwardenError('LLM_MALFORMED', 'JSON-mode response is not JSON', {
      cause: e,
      details: { provider },
    });
  }
  if (!isPlainObject(parsed)) {
    throw new MemwardenError('LLM_MALFORMED', 'JSON-mode response is not a JSON object', {
      details: { provider },
    });
  }
}
