/**
 * @module integrations/ai-sdk/tool-approval
 * The sensitive-action gate (MemLineage §3.7) in front of AI SDK tools.
 *
 * Two ways in:
 * - `memwardenToolApproval` — a `needsApproval` hook per tool. The hook can only say "ask the
 *   user" or "go ahead", so: allow → no approval; require_user → approval required; deny →
 *   the hook throws `POLICY_DENIED` and the generation stops. strip_and_retry and
 *   repair_and_retry cannot be carried out by a hook, so they fail closed the same way.
 * - `wrapToolsWithGate` — wraps `execute` as well, so every verdict is enforced per call and
 *   the agent loop continues: deny and strip_and_retry become tool errors the model reads,
 *   repair_and_retry runs the tool with the gate's repaired arguments, require_user goes
 *   through the SDK's approval flow and runs only once the user approved.
 *
 * The gate reads the context memwarden rendered (text + seal), never the model's own account
 * of what it read; `getContext` supplies it — pass the middleware itself
 * (`wrapToolsWithGate(tools, gate, mw)`) and its last retrieval is used. The integration derives
 * parameter provenance itself (issue 18): the gate traces every argument value to the sealed
 * segments (canonical forms, fail closed on values that trace to nothing), and the user's turn —
 * the retrieval's query, else the last user message the SDK passes to the tool — is the fresh
 * request that authorises values the user typed. Each tool call is decided, and audited, once:
 * `execute` reuses the verdict `needsApproval` obtained for the same call and input.
 */
import type { ModelMessage, Tool, ToolExecutionOptions } from 'ai';
import { MemwardenError } from '../../core/errors.js';
import type { Retrieval } from './middleware.js';

/** A proposed tool call. */
export interface GateCall {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

/** The rendered context the model saw, and the seal of its sentinels. */
export interface GateContext {
  readonly text: string;
  readonly seal: string;
  /** Layer 2 parameter provenance, when the integration tracked it (see core/gate). */
  readonly sources?: Readonly<
    Record<
      string,
      readonly {
        readonly value: unknown;
        readonly sourceClass: string;
        readonly entryId?: string;
      }[]
    >
  >;
  /** The user's request this turn (authorises `user_request` source classes). */
  readonly userRequest?: string;
}

export type GateVerdictKind =
  'allow' | 'deny' | 'require_user' | 'strip_and_retry' | 'repair_and_retry';

export interface GateVerdict {
  readonly kind: GateVerdictKind;
  readonly reason: string;
  /** For repair_and_retry: the arguments to run with instead. */
  readonly repairedArguments?: Record<string, unknown>;
}

/** The gate as this integration needs it (the core gate is adapted to this shape). */
export interface ActionGate {
  check(call: GateCall, context: GateContext): Promise<GateVerdict>;
}

/** What `getContext` learns about the call. */
export interface ToolCallInfo {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly input: Record<string, unknown>;
  readonly experimental_context?: unknown;
  /** The conversation the SDK passed with the call (its last user message is the user's turn). */
  readonly messages?: readonly ModelMessage[];
}

export type GetGateContext = (call: ToolCallInfo) => GateContext | Promise<GateContext>;

/** Anything that remembers the last sealed context it injected (`memwardenMiddleware`). */
export interface RetrievalSource {
  lastRetrieval(threadId?: string): Pick<Retrieval, 'context' | 'seal' | 'query'> | undefined;
}

/** `getContext` from a middleware: the last retrieval's context, seal and query (the user's turn). */
export function contextFromRetrieval(source: RetrievalSource): GetGateContext {
  return () => {
    const r = source.lastRetrieval();
    return {
      text: r?.context ?? '',
      seal: r?.seal ?? '',
      ...(r?.query === undefined || r.query === '' ? {} : { userRequest: r.query }),
    };
  };
}

const asGetContext = (c: GetGateContext | RetrievalSource): GetGateContext =>
  typeof c === 'function' ? c : contextFromRetrieval(c);

/** The text of the last user message among the SDK's messages ('' when none). */
export function lastUserText(messages: readonly ModelMessage[] | undefined): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return (m.content as readonly { type: string; text?: string }[])
      .map((p) => (p.type === 'text' ? (p.text ?? '') : ''))
      .join('\n')
      .trim();
  }
  return '';
}

export interface ToolApprovalOptions {
  readonly gate: ActionGate;
  /** The sealed context source: a function, or the middleware (its last retrieval). */
  readonly getContext: GetGateContext | RetrievalSource;
}

/** What the AI SDK passes to a `needsApproval` function. */
export interface NeedsApprovalOptions {
  toolCallId: string;
  messages: ModelMessage[];
  experimental_context?: unknown;
}

/** The AI SDK's `needsApproval` function type. */
export type NeedsApproval = (input: unknown, options: NeedsApprovalOptions) => Promise<boolean>;

function asArguments(input: unknown): Record<string, unknown> {
  if (typeof input === 'object' && input !== null && !Array.isArray(input))
    return input as Record<string, unknown>;
  // Tool inputs are JSON objects; anything else is not something the gate can reason about.
  throw new MemwardenError('INPUT_INVALID', 'tool input must be a JSON object');
}

async function decide(opts: ToolApprovalOptions, info: ToolCallInfo): Promise<GateVerdict> {
  const context = await asGetContext(opts.getContext)(info);
  // The user's own turn authorises what the user typed (a value the user gave is traced to them).
  const userRequest = context.userRequest ?? lastUserText(info.messages);
  return opts.gate.check(
    { tool: info.toolName, arguments: info.input },
    userRequest === '' || context.userRequest !== undefined ? context : { ...context, userRequest },
  );
}

function denied(toolName: string, verdict: GateVerdict): MemwardenError {
  const message =
    verdict.kind === 'strip_and_retry'
      ? `Tool call "${toolName}" was blocked: it relies on untrusted memory (${verdict.reason}). ` +
        'Retry without using content from the untrusted memory segments.'
      : `Tool call "${toolName}" was blocked by policy (${verdict.reason}).`;
  return new MemwardenError('POLICY_DENIED', message, {
    details: { tool: toolName, verdict: verdict.kind },
  });
}

/**
 * Build `needsApproval` hooks backed by the gate: `tool({ …, needsApproval: approval('send_money') })`.
 * Verdicts a hook cannot enforce (deny, strip, repair) throw `POLICY_DENIED`.
 */
export function memwardenToolApproval(
  opts: ToolApprovalOptions,
): (toolName: string) => NeedsApproval {
  return (toolName) => async (input, options) => {
    const verdict = await decide(opts, {
      toolName,
      toolCallId: options.toolCallId,
      input: asArguments(input),
      messages: options.messages,
      ...(options.experimental_context === undefined
        ? {}
        : { experimental_context: options.experimental_context }),
    });
    if (verdict.kind === 'allow') return false;
    if (verdict.kind === 'require_user') return true;
    throw denied(toolName, verdict);
  };
}

/**
 * Put every executable tool in `tools` behind the gate. Tools without `execute` (client-side
 * tools) are returned unchanged: the gate must then be applied where they run. `getContext`
 * is a function, or the `memwardenMiddleware` itself (its last retrieval: context, seal and
 * the user's query).
 */
export function wrapToolsWithGate<T extends Record<string, Tool>>(
  tools: T,
  gate: ActionGate,
  getContext: GetGateContext | RetrievalSource,
): T {
  const opts: ToolApprovalOptions = { gate, getContext };
  // Calls for which the SDK asked the user; only these may run on a require_user verdict.
  const approvalAsked = new Set<string>();
  // The verdict needsApproval obtained, reused by execute for the same call and input: one
  // decision (and one audit record) per tool call.
  const decided = new Map<string, { input: string; verdict: GateVerdict }>();
  const out: Record<string, Tool> = {};
  for (const [name, original] of Object.entries(tools)) {
    const execute = original.execute;
    if (execute === undefined) {
      out[name] = original;
      continue;
    }
    const info = (
      input: unknown,
      toolCallId: string,
      ctx: unknown,
      messages: readonly ModelMessage[] | undefined,
    ): ToolCallInfo => ({
      toolName: name,
      toolCallId,
      input: asArguments(input),
      ...(messages === undefined ? {} : { messages }),
      ...(ctx === undefined ? {} : { experimental_context: ctx }),
    });
    const own = original.needsApproval;
    const needsApproval = async (input: unknown, o: NeedsApprovalOptions): Promise<boolean> => {
      const verdict = await decide(
        opts,
        info(input, o.toolCallId, o.experimental_context, o.messages),
      );
      remember(decided, `${name}\u0000${o.toolCallId}`, { input: stableJson(input), verdict });
      // The tool's own approval requirement still stands for every call that may run
      // (deny and strip never run, so asking the user about them would be pointless).
      const ownSays = typeof own === 'function' ? await own(input as never, o) : own === true;
      const mayRun = verdict.kind === 'allow' || verdict.kind === 'repair_and_retry';
      const ask = verdict.kind === 'require_user' || (ownSays && mayRun);
      if (ask) {
        approvalAsked.add(o.toolCallId);
        // Bounded: approvals the user never answered must not accumulate forever.
        if (approvalAsked.size > 10_000)
          approvalAsked.delete(approvalAsked.values().next().value as string);
      }
      return ask;
    };
    const gatedExecute = async (input: unknown, o: ToolExecutionOptions): Promise<unknown> => {
      const key = `${name}\u0000${o.toolCallId}`;
      const prior = decided.get(key);
      decided.delete(key);
      const verdict =
        prior !== undefined && prior.input === stableJson(input)
          ? prior.verdict
          : await decide(opts, info(input, o.toolCallId, o.experimental_context, o.messages));
      const asked = approvalAsked.delete(o.toolCallId);
      switch (verdict.kind) {
        case 'allow':
          return execute(input as never, o);
        case 'require_user':
          // The SDK runs an approval-required call only after the user approved it.
          if (!asked)
            throw denied(name, { kind: 'deny', reason: 'user approval required but not obtained' });
          return execute(input as never, o);
        case 'repair_and_retry':
          if (verdict.repairedArguments === undefined)
            throw denied(name, { kind: 'deny', reason: verdict.reason });
          return execute(verdict.repairedArguments as never, o);
        case 'deny':
        case 'strip_and_retry':
          throw denied(name, verdict);
      }
    };
    out[name] = { ...original, needsApproval, execute: gatedExecute } as unknown as Tool;
  }
  return out as T;
}

function remember<V>(m: Map<string, V>, k: string, v: V): void {
  m.set(k, v);
  if (m.size > 10_000) m.delete(m.keys().next().value as string);
}

function stableJson(x: unknown): string {
  try {
    return JSON.stringify(x) ?? '';
  } catch {
    return '';
  }
}
