/**
 * @module adapters/llm/openai-compatible
 * A provider for any endpoint speaking the OpenAI chat-completions protocol
 * (`POST {baseUrl}/chat/completions`): OpenAI itself, vLLM, Ollama, LM Studio, gateways.
 * Built on `@ai-sdk/openai-compatible`; JSON mode is sent as
 * `response_format: { type: "json_object" }` and re-checked on the way back.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { MemwardenError } from '../../core/errors.js';
import type { LlmProvider, LlmRequest, LlmResponse } from '../../ports/llm.js';
import {
  AiSdkProvider,
  type RemoteProviderOptions,
  validateModelId,
  validateRetries,
  validateTimeout,
} from './ai-sdk-provider.js';

export interface OpenAiCompatibleProviderOptions extends RemoteProviderOptions {
  /** API root including the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string;
  readonly model: string;
  /** Bearer key; omit for local servers that take none (Ollama, vLLM without auth). */
  readonly apiKey?: string;
}

/** Parse and check an http(s) base URL; the trailing slash is dropped. */
export function validateBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string')
    throw new MemwardenError('INPUT_INVALID', 'baseUrl must be a string');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', 'baseUrl is not a URL', { cause: e });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new MemwardenError('INPUT_INVALID', 'baseUrl must be http(s)');
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in a URL end up in logs and error objects; take them as apiKey instead.
    throw new MemwardenError('INPUT_INVALID', 'baseUrl must not embed credentials');
  }
  return url.href.replace(/\/+$/, '');
}

/** Check an API key without ever echoing it. */
export function validateApiKey(apiKey: unknown): string {
  if (typeof apiKey !== 'string' || apiKey.length === 0 || /[\r\n]/.test(apiKey)) {
    throw new MemwardenError('INPUT_INVALID', 'apiKey must be a non-empty single-line string');
  }
  return apiKey;
}

/** The OpenAI chat-completions protocol via the Vercel AI SDK. */
export class OpenAiCompatibleProvider implements LlmProvider {
  readonly name: string;
  readonly #inner: AiSdkProvider;

  constructor(opts: OpenAiCompatibleProviderOptions) {
    const baseURL = validateBaseUrl(opts.baseUrl);
    const model = validateModelId(opts.model);
    const apiKey = opts.apiKey === undefined ? undefined : validateApiKey(opts.apiKey);
    const provider = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
    });
    this.name = `openai-compatible:${model}`;
    this.#inner = new AiSdkProvider({
      name: this.name,
      model: provider.chatModel(model),
      nativeJson: true,
      timeoutMs: validateTimeout(opts.timeoutMs, 60_000),
      maxRetries: validateRetries(opts.maxRetries),
    });
  }

  generate(req: LlmRequest): Promise<LlmResponse> {
    return this.#inner.generate(req);
  }
}
