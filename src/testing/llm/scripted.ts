/**
 * @module testing/llm/scripted
 * A deterministic `LlmProvider` for tests and the evaluation harness: a script function
 * decides every answer from the request and the call index, and every request is recorded
 * for assertions. No network, no clock, no randomness.
 */
import { MemwardenError } from '../../core/errors.js';
import type { LlmProvider, LlmRequest, LlmResponse } from '../../ports/llm.js';

/** What a script step may return: a full response, or just the text. */
export type ScriptedReply = LlmResponse | string;

/**
 * Decides the answer to call number `callIndex` (0-based). Throw to simulate a failure —
 * e.g. `new MemwardenError('LLM_TRANSPORT', …)` for a transient outage.
 */
export type LlmScript = (
  req: LlmRequest,
  callIndex: number,
) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModelOptions {
  /** Shown as `scripted:<name>` (default `scripted:model`). */
  readonly name?: string;
  readonly script: LlmScript;
}

/** A scripted, recording LLM provider. */
export class ScriptedModel implements LlmProvider {
  readonly name: string;
  readonly #script: LlmScript;
  readonly #requests: LlmRequest[] = [];

  constructor(opts: ScriptedModelOptions) {
    this.name = `scripted:${opts.name ?? 'model'}`;
    this.#script = opts.script;
  }

  /** Answer each call with the next reply in order; a call past the end is `LLM_UNAVAILABLE`. */
  static fromReplies(replies: readonly ScriptedReply[], name?: string): ScriptedModel {
    return new ScriptedModel({
      ...(name === undefined ? {} : { name }),
      script: (_req, i) => {
        const r = replies[i];
        if (r === undefined) {
          throw new MemwardenError(
            'LLM_UNAVAILABLE',
            `script exhausted after ${replies.length} replies`,
          );
        }
        return r;
      },
    });
  }

  /** Every request received, in order (a copy). */
  get requests(): readonly LlmRequest[] {
    return [...this.#requests];
  }

  /** How many calls were made. */
  get calls(): number {
    return this.#requests.length;
  }

  async generate(req: LlmRequest): Promise<LlmResponse> {
    const index = this.#requests.length;
    this.#requests.push(req);
    if (req.signal?.aborted === true) {
      throw new MemwardenError('LLM_TRANSPORT', 'request aborted', { cause: req.signal.reason });
    }
    const reply = await this.#script(req, index);
    const res: LlmResponse = typeof reply === 'string' ? { text: reply, toolCalls: [] } : reply;
    return { ...res, model: res.model ?? this.name };
  }
}
