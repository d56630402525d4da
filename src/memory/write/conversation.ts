/**
 * @module memory/write/conversation
 * Conversation ingestion (issue 20): `add(messages, …)` as Mem0 takes it, each message through
 * the one write path (screening, consolidation, quota, the signed commit) with the tier its
 * role earns —
 * - `user` → the caller's tier (default USER_OBSERVED), the user's own words (no parents);
 * - `assistant` → the same channel but `derived`, its parents the user turns stored before it
 *   in this call, so its label is propagated from theirs (MemLineage §3.5);
 * - `tool` → EXTERNAL_TOOL, untrusted: extracted or held like any tool output (Pattern 3);
 * - `system` → not a memory (instructions are not facts about the user), skipped.
 *
 * Without an extraction model, or with `infer: false`, every turn is stored as a memory of kind
 * `turn` (content `name: text` when the message names its speaker), its role, speaker and any
 * metadata in the signed metadata, its event time from the message or the call. With a model,
 * the user and assistant turns are one extraction request (`extractFacts`: JSON, every fact
 * screened) and each fact is consolidated as its own memory; a failed extraction falls back
 * to storing the turns (nothing the user said is lost). All texts of a call are embedded in
 * one batch.
 */
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import type { LlmProvider } from '../../ports/llm.js';
import type {
  AddOptions,
  AddResult,
  ChatTurn,
  ConversationItem,
  ConversationOptions,
  ConversationResult,
} from '../api.js';
import { extractFacts } from './extract.js';
import type { WritePath } from './write-path.js';

/** Most messages one call takes. */
export const MAX_MESSAGES = 1000;
const ROLES = new Set(['user', 'assistant', 'tool', 'system']);
/** Most earlier user turns an assistant turn names as parents. */
const ASSISTANT_PARENTS = 8;
/** Messages written concurrently (one group commit takes them together). */
const WRITE_WINDOW = 64;

function checkTurns(messages: unknown): readonly ChatTurn[] {
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES)
    throw new MemwardenError(
      'INPUT_INVALID',
      `messages must be a list of 1..${MAX_MESSAGES} messages`,
      {
        details: { field: 'messages' },
      },
    );
  messages.forEach((m: unknown, i) => {
    const t = m as Partial<ChatTurn> | null;
    if (typeof t !== 'object' || t === null || typeof t.role !== 'string' || !ROLES.has(t.role))
      throw new MemwardenError(
        'INPUT_INVALID',
        'a message has a role: user, assistant, tool or system',
        {
          details: { field: 'messages', index: i },
        },
      );
    if (typeof t.content !== 'string' || t.content.length === 0)
      throw new MemwardenError('INPUT_INVALID', 'a message has non-empty text content', {
        details: { field: 'messages', index: i },
      });
    if (
      t.name !== undefined &&
      (typeof t.name !== 'string' || t.name.length === 0 || t.name.length > 128)
    )
      throw new MemwardenError('INPUT_INVALID', 'a message name is 1..128 characters', {
        details: { field: 'messages', index: i },
      });
  });
  return messages as readonly ChatTurn[];
}

const turnText = (m: ChatTurn): string =>
  m.name === undefined ? m.content : `${m.name}: ${m.content}`;

export class ConversationWriter {
  constructor(
    private readonly writer: WritePath,
    private readonly embed: (texts: string[]) => Promise<Float32Array[]>,
    private readonly extractor: LlmProvider | undefined,
  ) {}

  async add(messages: unknown, opts: ConversationOptions): Promise<ConversationResult> {
    const turns = checkTurns(messages);
    const tier: SourceTier = opts.tier ?? 'USER_OBSERVED';
    // Every message's own checks first: a bad one fails the call before anything is written.
    for (const [i, m] of turns.entries()) {
      if (m.role === 'system') continue;
      try {
        await this.writer.checkWrite(
          turnText(m),
          opts.principal,
          m.role === 'tool' ? 'EXTERNAL_TOOL' : tier,
          opts.source,
        );
      } catch (e) {
        if (e instanceof MemwardenError) {
          throw new MemwardenError(e.code, e.message, {
            details: { ...e.details, field: 'messages', index: i },
          });
        }
        throw e;
      }
    }
    if (this.extractor !== undefined && opts.infer !== false) {
      const r = await this.addExtracted(turns, opts, tier, this.extractor);
      if (r !== undefined) return r;
    }
    return this.addTurns(turns, opts, tier);
  }

  /** Turn-level storage: every user / assistant / tool message is a memory. */
  private async addTurns(
    turns: readonly ChatTurn[],
    opts: ConversationOptions,
    tier: SourceTier,
  ): Promise<ConversationResult> {
    const stored = turns.map((m, i) => ({ m, i })).filter((x) => x.m.role !== 'system');
    const trusted = stored.filter((x) => x.m.role !== 'tool');
    const vectors = await this.embed(trusted.map((x) => turnText(x.m)));
    const vectorOf = new Map(trusted.map((x, j) => [x.i, vectors[j] as Float32Array]));
    const results: ConversationItem[] = [];
    const held: { reviewId: string; reasons: readonly string[]; message: number }[] = [];
    const userVersions: string[] = [];
    const { infer: _i, ...base } = opts;
    const one = async ({ m, i }: { m: ChatTurn; i: number }): Promise<AddResult> => {
      const metadata = {
        ...opts.metadata,
        ...m.metadata,
        role: m.role,
        ...(m.name === undefined ? {} : { name: m.name }),
      };
      const eventAt = m.eventAt ?? opts.eventAt;
      const common: AddOptions = {
        ...base,
        kind: opts.kind ?? 'turn',
        metadata,
        ...(eventAt === undefined ? {} : { eventAt }),
      };
      if (m.role === 'tool')
        return this.writer.add(turnText(m), {
          ...common,
          tier: 'EXTERNAL_TOOL',
          kind: opts.kind ?? 'tool_result',
        });
      if (m.role === 'user')
        return this.writer.add(turnText(m), {
          ...common,
          tier,
          parents: [],
          embedding: vectorOf.get(i) as Float32Array,
        });
      return this.writer.add(turnText(m), {
        ...common,
        tier,
        derived: true,
        parents: userVersions.slice(-ASSISTANT_PARENTS),
        embedding: vectorOf.get(i) as Float32Array,
      });
    };
    // Consecutive messages that do not depend on each other (all but an assistant turn, whose
    // parents are the user turns before it) are written concurrently, so the ledger's group
    // commit takes them in few transactions; results keep the messages' order.
    let i = 0;
    while (i < stored.length) {
      let j = i + 1;
      if ((stored[i] as { m: ChatTurn }).m.role !== 'assistant')
        while (
          j < stored.length &&
          j - i < WRITE_WINDOW &&
          (stored[j] as { m: ChatTurn }).m.role !== 'assistant'
        )
          j++;
      const group = stored.slice(i, j);
      const outs = await Promise.all(group.map(one));
      outs.forEach((r, g) => {
        const { m, i: index } = group[g] as { m: ChatTurn; i: number };
        if (r.status === 'pending_review') {
          held.push({ reviewId: r.reviewId, reasons: r.reasons, message: index });
          return;
        }
        if (m.role === 'user' && r.event !== 'NOOP') userVersions.push(r.memory.versionId);
        results.push(item(r, index));
        for (const x of r.extra ?? []) results.push({ event: 'ADD', memory: x, message: index });
      });
      i = j;
    }
    return { status: 'stored', results, held };
  }

  /**
   * Extraction: one request for the user and assistant turns, each fact consolidated as its
   * own memory (derived from the conversation); tool turns through the untrusted path.
   * Undefined when the model failed (the caller then stores the turns).
   */
  private async addExtracted(
    turns: readonly ChatTurn[],
    opts: ConversationOptions,
    tier: SourceTier,
    extractor: LlmProvider,
  ): Promise<ConversationResult | undefined> {
    const said = turns.filter((m) => m.role === 'user' || m.role === 'assistant');
    let facts: string[] = [];
    if (said.length > 0) {
      try {
        const text = said.map((m) => `${m.name ?? m.role}: ${m.content}`).join('\n');
        facts = (await extractFacts(text, extractor, { tier })).facts.map((f) => f.fact);
      } catch (e) {
        if (e instanceof MemwardenError) return undefined;
        throw e;
      }
    }
    const vectors = await this.embed(facts);
    const results: ConversationItem[] = [];
    const held: { reviewId: string; reasons: readonly string[]; message?: number }[] = [];
    const { infer: _i, ...base } = opts;
    const lastAt =
      [...said].reverse().find((m) => m.eventAt !== undefined)?.eventAt ?? opts.eventAt;
    for (const [j, fact] of facts.entries()) {
      const r = await this.writer.add(fact, {
        ...base,
        tier,
        kind: opts.kind ?? 'fact',
        derived: true,
        parents: [],
        embedding: vectors[j] as Float32Array,
        ...(lastAt === undefined ? {} : { eventAt: lastAt }),
      });
      if (r.status === 'pending_review') held.push({ reviewId: r.reviewId, reasons: r.reasons });
      else results.push(item(r));
    }
    for (const [i, m] of turns.entries()) {
      if (m.role !== 'tool') continue;
      const r = await this.writer.add(turnText(m), {
        ...base,
        tier: 'EXTERNAL_TOOL',
        kind: opts.kind ?? 'tool_result',
        ...(m.eventAt === undefined ? {} : { eventAt: m.eventAt }),
      });
      if (r.status === 'pending_review')
        held.push({ reviewId: r.reviewId, reasons: r.reasons, message: i });
      else {
        results.push(item(r, i));
        for (const x of r.extra ?? []) results.push({ event: 'ADD', memory: x, message: i });
      }
    }
    return { status: 'stored', results, held };
  }
}

function item(r: Extract<AddResult, { status: 'stored' }>, message?: number): ConversationItem {
  return {
    event: r.event,
    memory: r.memory,
    ...(message === undefined ? {} : { message }),
    ...(r.previous === undefined ? {} : { previous: r.previous }),
    ...(r.conflict === undefined ? {} : { conflict: r.conflict }),
  };
}
