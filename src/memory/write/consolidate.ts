/**
 * @module memory/write/consolidate
 * Consolidation instead of refusal (issue 20, ADR 0051): before a write is committed, decide
 * what it does to what is already remembered — `ADD` (a new memory), `UPDATE` (a signed new
 * version superseding an existing one, same memory id), or `NOOP` (the same content is already
 * remembered: the existing record, nothing written). A distinct fact is never an error.
 *
 * One stage with a narrow contract, so the write pipeline calls it where the near-duplicate
 * refusal used to be: `candidates` (the principal's own live, verified memories of the same
 * kind and scope nearest the new embedding) then `decide` — the deterministic default
 * (`core/text/relate`) or an LLM through the provider port (`LlmConsolidation`, Mem0's
 * update step). Either way the security rule applies last and cannot be overridden: a write
 * of a lower tier (or a less safe lineage label) never supersedes a memory of a higher one —
 * it is stored beside it (`ADD` with `conflict`), and the refusal is audited.
 */
import { MemwardenError } from '../../core/errors.js';
import { type JsonObject, jsonEqual } from '../../core/entry/meta.js';
import type { SignedEntry } from '../../core/entry/index.js';
import { relateWords, relationKeysAndProbes, words } from '../../core/text/index.js';
import { type SourceTier, type TrustLabel, isUntrustedLabel, tierRank } from '../../core/trust.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { SearchHit, StorageBackend, StoredEntry } from '../../ports/storage.js';
import type { Ledger } from '../log/ledger.js';
import type { ReadModel } from '../read/read-model.js';
import { parseFilter } from '../../core/filter/index.js';

/** What is being written, as consolidation sees it. */
export interface NewFact {
  readonly principal: string;
  readonly content: string;
  readonly kind: string;
  readonly tier: SourceTier;
  readonly label: TrustLabel;
  readonly embedding: Float32Array;
  readonly metadata?: JsonObject | undefined;
  readonly evt?: bigint | undefined;
  readonly runId?: string | undefined;
  readonly agentId?: string | undefined;
}

/** An existing memory close to the new fact: its row, its verified record, the cosine. */
export interface Existing {
  readonly stored: StoredEntry;
  readonly entry: SignedEntry;
  readonly leafIndex: number;
  readonly similarity: number;
}

export type Decision =
  | { readonly event: 'ADD' }
  | { readonly event: 'ADD'; readonly conflict: Existing }
  | { readonly event: 'NOOP'; readonly existing: Existing }
  | { readonly event: 'UPDATE'; readonly target: Existing };

/** Candidates nearer than this cosine are considered (the rule itself decides). */
export const CANDIDATE_FLOOR = 0.5;
/** How many nearest memories are looked at. */
export const CANDIDATES = 5;
/** Kinds that record events (conversation turns): never superseded, only deduplicated. */
export const EVENT_KINDS: ReadonlySet<string> = new Set([
  'turn',
  'message',
  'event',
  'observation',
]);

/** Parsed scope filters by kind, run and agent (a write's candidates' filter; bounded). */
const scopeFilters = new Map<string, ReturnType<typeof parseFilter>>();

/** Same kind, same run scope and same agent scope (both absent counts as the same). */
function scopeFilter(fact: NewFact): ReturnType<typeof parseFilter> {
  // No run or agent scope (the common write): keyed by the kind behind a NUL, which neither a
  // kind (limits refuse NUL) nor the JSON key of a scoped write (it starts with `[`) can hold.
  const key =
    fact.runId === undefined && fact.agentId === undefined
      ? `\u0000${fact.kind}`
      : JSON.stringify([fact.kind, fact.runId ?? null, fact.agentId ?? null]);
  if (scopeFilters.has(key)) return scopeFilters.get(key);
  const filter = parseFilter({
    AND: [
      { kind: fact.kind },
      fact.runId === undefined ? { NOT: { runId: '*' } } : { runId: fact.runId },
      fact.agentId === undefined ? { NOT: { agentId: '*' } } : { agentId: fact.agentId },
    ],
  });
  if (scopeFilters.size >= 1_000) scopeFilters.clear();
  scopeFilters.set(key, filter);
  return filter;
}

/**
 * The principal's own live, verified memories of the same kind and scope nearest the new
 * embedding (cosine ≥ {@link CANDIDATE_FLOOR}), nearest first — from the read model when there
 * is one, else the database (filters pushed into SQL).
 */
export async function candidatesFor(
  view: StorageBackend,
  ledger: Ledger,
  fact: NewFact,
  opts: { nowNs: bigint; model?: ReadModel | undefined },
): Promise<Existing[]> {
  return verifiedCandidates(ledger, fact, await nearestOwn(view, fact, opts));
}

/**
 * The rows {@link candidatesFor} verifies: the principal's own live memories of the same kind
 * and scope nearest the new embedding (cosine ≥ {@link CANDIDATE_FLOOR}), NOT yet verified.
 */
export async function nearestOwn(
  /** The principal's view, or how to get it (asked only when the read model cannot answer). */
  view: StorageBackend | (() => StorageBackend),
  fact: NewFact,
  opts: { nowNs: bigint; model?: ReadModel | undefined },
): Promise<SearchHit[]> {
  const filter = scopeFilter(fact);
  const q = {
    embedding: fact.embedding,
    nowNs: opts.nowNs,
    limit: CANDIDATES,
    ...(filter === undefined ? {} : { filter }),
  };
  const hits =
    (await opts.model?.search(fact.principal, { ...q, minScore: CANDIDATE_FLOOR - 1e-4 })) ??
    (await (typeof view === 'function' ? view() : view).searchEntries(q));
  return hits.filter(
    (h) =>
      h.entry.owner === fact.principal &&
      h.entry.deleted !== true &&
      h.entry.supersededBy === undefined &&
      (h.vectorScore ?? -1) >= CANDIDATE_FLOOR,
  );
}

/** The rows of {@link nearestOwn} that verify (MAC, signature, inclusion), nearest first. */
export async function verifiedCandidates(
  ledger: Ledger,
  fact: NewFact,
  own: readonly SearchHit[],
): Promise<Existing[]> {
  const verdicts = await ledger.verifyMany(own.map((h) => h.entry));
  const out: Existing[] = [];
  own.forEach((h, i) => {
    const v = verdicts[i];
    if (v === undefined || !v.ok || v.entry.ns !== fact.principal) return;
    out.push({
      stored: h.entry,
      entry: v.entry,
      leafIndex: v.leafIndex,
      similarity: h.vectorScore ?? -1,
    });
  });
  return out.sort((a, b) => b.similarity - a.similarity);
}

/**
 * Whether {@link decide} answers a plain `ADD` (nothing the same, nothing related) on ANY
 * subset of `own` — so whichever of them verify, the decision is `ADD` and verifying them
 * (a MAC over each row at least) decides nothing (ADR 0081). Judged on the records the rows'
 * bytes decode to, unverified: `decide` is monotone — a `NOOP` needs a candidate that is the
 * same, an `UPDATE` or a conflict a related one, and dropping candidates creates neither — so
 * a plain `ADD` over all of them is a plain `ADD` over the verified ones. A row that does not
 * decode, or names another principal, would be dropped by verification: left out here too.
 * False whenever the answer could differ: the caller then verifies and decides as before.
 */
export function addsWhateverVerifies(
  ledger: Ledger,
  fact: NewFact,
  own: readonly SearchHit[],
): boolean {
  if (own.length === 0) return true;
  const all: Existing[] = [];
  for (const h of own) {
    const entry = ledger.unverifiedRecordOf(h.entry);
    if (entry === undefined || entry.ns !== fact.principal) continue;
    all.push({
      stored: h.entry,
      entry,
      leafIndex: h.entry.leafIndex,
      similarity: h.vectorScore ?? -1,
    });
  }
  const d = decide(fact, all);
  return d.event === 'ADD' && !('conflict' in d);
}

/**
 * Whether the deterministic rule ({@link decide}) answers a plain `ADD` for `fact` whatever its
 * candidates are, known without searching for them (ADR 0084): true only when the read model
 * would answer the candidate search and none of the rows it holds that the principal owns —
 * of any kind, scope or expiry, a superset of the candidates — has the same words as the new
 * fact or a relation key (`core/text` `relationKeys`, of its signed content) the fact's probes
 * name. `decide` needs such a row for anything but a plain `ADD`: a `NOOP` the same words, an
 * `UPDATE` or a conflict the same words or a `relateWords` update (event kinds: the same words
 * only). False when the model cannot tell (none, not serving this principal, rows still being
 * indexed) or a row may relate: the caller searches and decides as before. Callers with an LLM
 * consolidator or the untrusted near-duplicate rule (it needs the nearest's cosine) must not
 * use it.
 */
export function addsWithoutCandidates(
  model: ReadModel | undefined,
  ledger: Ledger,
  fact: NewFact,
  nowNs: bigint,
): boolean | Promise<boolean> {
  if (model === undefined) return false;
  const { keys, probes } = relationKeysAndProbes(words(fact.content), EVENT_KINDS.has(fact.kind));
  const q = {
    nowNs,
    dimensions: fact.embedding.length,
    recordOf: (row: StoredEntry) => ledger.unverifiedRecordOf(row),
    text: { content: fact.content, keys },
  };
  // Loaded partitions answer at once (the common write: no promise, ADR 0088).
  const now = model.mayRelateNow(fact.principal, probes, q);
  if (now !== null) return now === false;
  return model.mayRelate(fact.principal, probes, q).then((may) => may === false);
}

/**
 * The lineage label's trust class: 0 trusted side (TRUSTED, DERIVED_TRUSTED — label authority
 * T), 1 untrusted side (DERIVED_UNTRUSTED, EXTERNAL — U). Supersession compares classes, not
 * derivation steps: a user's correction written after a search is auto-attributed to what the
 * search returned (MemLineage on_retrieve), so it is DERIVED_TRUSTED when that was trusted —
 * and must still be able to correct the TRUSTED memory it derives from.
 */
const labelClass = (l: TrustLabel): 0 | 1 => (isUntrustedLabel(l) ? 1 : 0);

/**
 * May a write of (tier, label) supersede `old`? Never from a lower tier or from the untrusted
 * side of the lineage lattice over the trusted side.
 */
export function maySupersede(fact: Pick<NewFact, 'tier' | 'label'>, old: SignedEntry): boolean {
  return (
    tierRank(fact.tier) <= tierRank(old.tier) && labelClass(fact.label) <= labelClass(old.label)
  );
}

/**
 * The words of a verified record's content, split once per record object (the ledger hands
 * out the same decoded record for the same bytes, so a memory that is a candidate of many
 * writes is split once).
 */
const wordsByEntry = new WeakMap<SignedEntry, readonly string[]>();
function entryWords(e: SignedEntry): readonly string[] {
  let w = wordsByEntry.get(e);
  if (w === undefined) {
    w = words(e.content);
    wordsByEntry.set(e, w);
  }
  return w;
}

const sameWords = (x: readonly string[], y: readonly string[]): boolean =>
  x.length === y.length && x.every((w, i) => w === y[i]);

/** Same content (word for word), same metadata, same event time: nothing new to remember. */
function isSame(fact: NewFact, factWords: readonly string[], e: SignedEntry): boolean {
  return (
    sameWords(factWords, entryWords(e)) &&
    jsonEqual(fact.metadata ?? null, e.meta ?? null) &&
    fact.evt === e.evt
  );
}

/** Apply the tier rule to a wished-for update. */
function guarded(fact: NewFact, target: Existing): Decision {
  return maySupersede(fact, target.entry)
    ? { event: 'UPDATE', target }
    : { event: 'ADD', conflict: target };
}

/** Is `a` at least as trusted as `b` (tier, and the lineage label's trust class)? */
function atLeast(
  a: { tier: SourceTier; label: TrustLabel },
  b: { tier: SourceTier; label: TrustLabel },
): boolean {
  return tierRank(a.tier) <= tierRank(b.tier) && labelClass(a.label) <= labelClass(b.label);
}

/**
 * The deterministic default. The same content (and metadata and event time) as a memory at
 * least as trusted → NOOP. Otherwise the candidates it corrects — the same words with other
 * metadata or time, or `relate` says `update` — decide: one of equal trust is the memory being
 * corrected (UPDATE); else a less trusted one is superseded by the better source (UPDATE);
 * else only more trusted ones: stored beside them (ADD with `conflict`, the tier rule). Event
 * kinds (turns) are never updated, only deduplicated. Nothing related → ADD.
 */
export function decide(fact: NewFact, candidates: readonly Existing[]): Decision {
  const fw = words(fact.content);
  for (const c of candidates) {
    if (isSame(fact, fw, c.entry) && atLeast(c.entry, fact)) return { event: 'NOOP', existing: c };
  }
  if (EVENT_KINDS.has(fact.kind)) return { event: 'ADD' };
  const related = candidates.filter((c) => {
    const cw = entryWords(c.entry);
    return sameWords(fw, cw) || relateWords(cw, fw) === 'update';
  });
  const equal = related.find((c) => atLeast(c.entry, fact) && atLeast(fact, c.entry));
  if (equal !== undefined) return { event: 'UPDATE', target: equal };
  const lower = related.find((c) => atLeast(fact, c.entry));
  if (lower !== undefined) return { event: 'UPDATE', target: lower };
  const higher = related[0];
  return higher === undefined ? { event: 'ADD' } : { event: 'ADD', conflict: higher };
}

/**
 * Mem0's update step through the provider port: the model sees the new fact and the nearest
 * memories (numbered, never their ids) and answers `{"event": "ADD" | "UPDATE" | "NONE",
 * "index": n}`. Its answer is checked (a known event, an index in range); anything else —
 * including a transport failure — falls back to ADD (no supersession without a reason). The
 * tier rule applies to the model's UPDATE exactly as to the default's.
 */
export class LlmConsolidation {
  constructor(private readonly llm: LlmProvider) {}

  async decide(fact: NewFact, candidates: readonly Existing[]): Promise<Decision> {
    const fw = words(fact.content);
    for (const c of candidates)
      if (isSame(fact, fw, c.entry) && atLeast(c.entry, fact))
        return { event: 'NOOP', existing: c };
    if (candidates.length === 0 || EVENT_KINDS.has(fact.kind)) return { event: 'ADD' };
    let text: string;
    try {
      const r = await this.llm.generate({
        json: true,
        temperature: 0,
        messages: [
          { role: 'system', content: CONSOLIDATION_PROMPT },
          {
            role: 'user',
            content: JSON.stringify({
              new_fact: fact.content,
              memories: candidates.map((c, i) => ({ index: i, text: c.entry.content })),
            }),
          },
        ],
      });
      text = r.text;
    } catch (e) {
      if (e instanceof MemwardenError) return { event: 'ADD' };
      throw e;
    }
    const answer = parseAnswer(text, candidates.length);
    if (answer === undefined || answer.event === 'ADD') return { event: 'ADD' };
    const c = candidates[answer.index] as Existing;
    if (answer.event === 'NONE') return { event: 'NOOP', existing: c };
    return guarded(fact, c);
  }
}

export const CONSOLIDATION_PROMPT = [
  'You maintain a memory store. Compare the new fact with the existing memories.',
  'Answer with one JSON object: {"event": "ADD" | "UPDATE" | "NONE", "index": <memory index>}.',
  'UPDATE: the new fact replaces one memory (the same subject, a changed value, a correction or a negation).',
  'NONE: one memory already says the same thing. ADD: the new fact is new information.',
  'Give "index" for UPDATE and NONE only.',
].join('\n');

function parseAnswer(
  text: string,
  n: number,
): { event: 'ADD' } | { event: 'UPDATE' | 'NONE'; index: number } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const event = (v as { event?: unknown }).event;
  if (event === 'ADD') return { event };
  if (event !== 'UPDATE' && event !== 'NONE') return undefined;
  const index = (v as { index?: unknown }).index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n)
    return undefined;
  return { event, index };
}
