/**
 * @module adapters/llm/env
 * Pick and configure a provider from the environment — the one place keys are read, at the
 * edge, and only to be handed to a constructor. Keys are never logged or put in errors.
 *
 * - `ANTHROPIC_API_KEY`: used when the provider is Anthropic (explicitly, or a `claude-*` /
 *   `anthropic:`-prefixed model);
 * - `OPENAI_API_KEY`: the bearer key for OpenAI-compatible endpoints (optional for a local
 *   server given by base URL);
 * - `MEMWARDEN_LLM_BASE_URL`: the API root when `baseUrl` is not passed.
 */
import { MemwardenError } from '../../core/errors.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { RemoteProviderOptions } from './ai-sdk-provider.js';
import { AnthropicProvider } from './anthropic.js';
import { OpenAiCompatibleProvider } from './openai-compatible.js';

/** The public OpenAI API root, used when neither `baseUrl` nor the environment name one. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface ProviderFromEnvOptions extends RemoteProviderOptions {
  /** Model id; an `anthropic:` or `openai:` prefix selects the provider and is stripped. */
  readonly model: string;
  /** API root; overrides `MEMWARDEN_LLM_BASE_URL`. */
  readonly baseUrl?: string;
  /** Force the provider instead of inferring it from the model name. */
  readonly provider?: 'openai-compatible' | 'anthropic';
  /** The environment to read (default `process.env`); injectable for tests. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** Build the provider the environment describes. Missing keys are `LLM_UNAVAILABLE`. */
export function providerFromEnv(opts: ProviderFromEnvOptions): LlmProvider {
  const env = opts.env ?? process.env;
  let model = opts.model;
  let kind = opts.provider;
  const prefix = /^(anthropic|openai):(.+)$/.exec(model);
  if (prefix !== null) {
    model = prefix[2] as string;
    kind ??= prefix[1] === 'anthropic' ? 'anthropic' : 'openai-compatible';
  }
  kind ??= model.startsWith('claude') ? 'anthropic' : 'openai-compatible';
  const baseUrl = opts.baseUrl ?? nonEmpty(env['MEMWARDEN_LLM_BASE_URL']);
  const common = {
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    ...(opts.maxRetries === undefined ? {} : { maxRetries: opts.maxRetries }),
    ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
  };
  if (kind === 'anthropic') {
    const apiKey = nonEmpty(env['ANTHROPIC_API_KEY']);
    if (apiKey === undefined) {
      throw new MemwardenError('LLM_UNAVAILABLE', 'ANTHROPIC_API_KEY is not set', {
        details: { provider: 'anthropic' },
      });
    }
    return new AnthropicProvider({
      model,
      apiKey,
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...common,
    });
  }
  const apiKey = nonEmpty(env['OPENAI_API_KEY']);
  if (apiKey === undefined && baseUrl === undefined) {
    // The public API always needs a key; a local server (named by URL) may not.
    throw new MemwardenError('LLM_UNAVAILABLE', 'OPENAI_API_KEY is not set', {
      details: { provider: 'openai-compatible' },
    });
  }
  return new OpenAiCompatibleProvider({
    baseUrl: baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    model,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...common,
  });
}
