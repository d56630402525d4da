/**
 * @module adapters/llm/anthropic
 * A provider for the Anthropic Messages API (`POST {baseUrl}/messages`), built on
 * `@ai-sdk/anthropic`. Anthropic has no schema-less JSON mode, so JSON mode is an explicit
 * system instruction plus a strict check of the answer (a non-object answer is
 * `LLM_MALFORMED`).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import type { LlmProvider, LlmRequest, LlmResponse } from '../../ports/llm.js';
import {
  AiSdkProvider,
  type RemoteProviderOptions,
  validateModelId,
  validateRetries,
  validateTimeout,
} from './ai-sdk-provider.js';
import { validateApiKey, validateBaseUrl } from './openai-compatible.js';

export interface AnthropicProviderOptions extends RemoteProviderOptions {
  /** e.g. `claude-sonnet-4-5`. */
  readonly model: string;
  readonly apiKey: string;
  /** API root including the version segment; default `https://api.anthropic.com/v1`. */
  readonly baseUrl?: string;
}

/** The Anthropic Messages API via the Vercel AI SDK. */
export class AnthropicProvider implements LlmProvider {
  readonly name: string;
  readonly #inner: AiSdkProvider;

  constructor(opts: AnthropicProviderOptions) {
    const model = validateModelId(opts.model);
    const apiKey = validateApiKey(opts.apiKey);
    const provider = createAnthropic({
      apiKey,
      ...(opts.baseUrl === undefined ? {} : { baseURL: validateBaseUrl(opts.baseUrl) }),
      ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
    });
    this.name = `anthropic:${model}`;
    this.#inner = new AiSdkProvider({
      name: this.name,
      model: provider(model),
      nativeJson: false,
      timeoutMs: validateTimeout(opts.timeoutMs, 60_000),
      maxRetries: validateRetries(opts.maxRetries),
    });
  }

  generate(req: LlmRequest): Promise<LlmResponse> {
    return this.#inner.generate(req);
  }
}
