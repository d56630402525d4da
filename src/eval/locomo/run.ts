/**
 * @module eval/locomo/run
 * `memwarden eval locomo`: evidence recall on LoCoMo. Every dialogue turn of a conversation is
 * written to a fresh default memwarden (the embedded store, the read model, detection on) as a
 * conversation (`add(messages)`: one call per session, the speaker as the message name, the
 * session's date as the event time, the turn's `dia_id` in its metadata); every question that
 * has evidence is searched with the default ranking; recall@k is the share of a question's
 * evidence turns among the top k, averaged per category. In the same run, over the same turn
 * texts and the same vectors (one embedding per text, shared), two baselines: undefended dense
 * retrieval (cosine top-k) and BM25 (`core/text`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cosine } from '../../core/smsr/near-duplicate.js';
import { bm25, bm25Stats, queryTerms, termFrequencies, tokenize } from '../../core/text/index.js';
import type { Embedder } from '../../ports/embedder.js';
import { Memory } from '../../open.js';
import type { Conversation } from './data.js';

export const SYSTEMS = ['memwarden', 'dense', 'bm25'] as const;
export type System = (typeof SYSTEMS)[number];
export const KS = [5, 10] as const;

export interface LocomoOptions {
  readonly embedder: Embedder;
  readonly progress?: (line: string) => void;
  /** Conversations to evaluate (default: all). */
  readonly limit?: number;
}

/** Recall of one system at one k, over a set of questions. */
export interface Cell {
  readonly system: System;
  readonly category: string;
  readonly k: number;
  readonly recall: number;
  readonly questions: number;
}

export interface LocomoReport {
  readonly model: string;
  readonly conversations: readonly {
    id: string;
    turns: number;
    questions: number;
    writeSeconds: number;
  }[];
  readonly cells: readonly Cell[];
  /** Turns written per second by default memwarden (all conversations). */
  readonly turnsPerSecond: number;
}

/** An embedder that embeds each distinct text once (the systems share the vectors). */
class SharedVectors implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  readonly cache = new Map<string, Float32Array>();
  constructor(private readonly inner: Embedder) {
    this.name = inner.name;
    this.dimensions = inner.dimensions;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length > 0) {
      const vs = await this.inner.embed(missing);
      missing.forEach((t, i) => this.cache.set(t, vs[i] as Float32Array));
    }
    return texts.map((t) => this.cache.get(t) as Float32Array);
  }
}

const turnText = (speaker: string, text: string): string => `${speaker}: ${text}`;

/** Share of `evidence` among `got` (the top k's dia ids). */
function recallOf(got: readonly string[], evidence: readonly string[]): number {
  const set = new Set(got);
  return evidence.filter((e) => set.has(e)).length / evidence.length;
}

export async function runLocomo(
  data: readonly Conversation[],
  opts: LocomoOptions,
): Promise<LocomoReport> {
  const log = opts.progress ?? (() => undefined);
  const vectors = new SharedVectors(opts.embedder);
  const convs = opts.limit === undefined ? data : data.slice(0, opts.limit);
  const kMax = Math.max(...KS);
  /** recalls[system][category][k] */
  const recalls = new Map<string, number[]>();
  const push = (system: System, category: string, k: number, r: number): void => {
    const key = `${system}|${category}|${k}`;
    const list = recalls.get(key) ?? [];
    list.push(r);
    recalls.set(key, list);
  };
  const perConv: { id: string; turns: number; questions: number; writeSeconds: number }[] = [];
  let totalTurns = 0;
  let totalWrite = 0;
  for (const [ci, conv] of convs.entries()) {
    const dir = mkdtempSync(join(tmpdir(), 'mw-locomo-'));
    const mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: vectors });
    try {
      const { id: principal } = await mem.createPrincipal('user', conv.id);
      // Write: one conversation call per session.
      const t0 = performance.now();
      const sessions = new Map<number, (typeof conv.turns)[number][]>();
      for (const t of conv.turns) sessions.set(t.session, [...(sessions.get(t.session) ?? []), t]);
      let written = 0;
      for (const [s, turns] of sessions) {
        const r = await mem.add(
          turns.map((t) => ({
            role: 'user' as const,
            name: t.speaker,
            content: t.text,
            ...(t.at === undefined ? {} : { eventAt: t.at }),
            metadata: { dia_id: t.diaId },
          })),
          { principal, metadata: { conversation: conv.id, session: s }, infer: false },
        );
        written += r.results.length;
        if (r.held.length > 0)
          log(`${conv.id} session ${s}: ${r.held.length} turns held for review`);
      }
      const writeSeconds = (performance.now() - t0) / 1000;
      totalTurns += conv.turns.length;
      totalWrite += writeSeconds;
      log(
        `${conv.id} (${ci + 1}/${convs.length}): wrote ${written}/${conv.turns.length} turns in ${writeSeconds.toFixed(1)} s (${(conv.turns.length / writeSeconds).toFixed(1)} turns/s)`,
      );
      // The baselines' index: the same texts, the same vectors.
      const texts = conv.turns.map((t) => turnText(t.speaker, t.text));
      const docVecs = await vectors.embed(texts);
      const docToks = texts.map(tokenize);
      const stats = bm25Stats(docToks);
      const tfs = docToks.map(termFrequencies);
      const top = (scores: readonly number[]): string[] =>
        scores
          .map((s, i) => ({ s, i }))
          .sort((a, b) => b.s - a.s || a.i - b.i)
          .slice(0, kMax)
          .map((x) => (conv.turns[x.i] as (typeof conv.turns)[number]).diaId);
      const t1 = performance.now();
      for (const [qi, q] of conv.questions.entries()) {
        const [qv] = await vectors.embed([q.question]);
        const res = await mem.search(q.question, {
          principal,
          limit: kMax,
          embedding: qv as Float32Array,
        });
        const ranked: Record<System, string[]> = {
          memwarden: res.results.map((h) => String(h.memory.metadata?.dia_id ?? '')),
          dense: top(docVecs.map((v) => cosine(qv as Float32Array, v))),
          bm25: top(
            tfs.map((tf, i) =>
              bm25(queryTerms(q.question), tf, (docToks[i] as string[]).length, stats),
            ),
          ),
        };
        for (const system of SYSTEMS) {
          for (const k of KS) {
            const r = recallOf(ranked[system].slice(0, k), q.evidence);
            push(system, String(q.category), k, r);
            push(system, 'all', k, r);
          }
        }
        if ((qi + 1) % 50 === 0) log(`${conv.id}: ${qi + 1}/${conv.questions.length} questions`);
      }
      log(
        `${conv.id}: ${conv.questions.length} questions in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
      );
      perConv.push({
        id: conv.id,
        turns: conv.turns.length,
        questions: conv.questions.length,
        writeSeconds,
      });
    } finally {
      await mem.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const cells: Cell[] = [];
  const categories = [...new Set([...recalls.keys()].map((k) => k.split('|')[1] as string))].sort();
  for (const system of SYSTEMS)
    for (const category of categories)
      for (const k of KS) {
        const list = recalls.get(`${system}|${category}|${k}`) ?? [];
        if (list.length === 0) continue;
        cells.push({
          system,
          category,
          k,
          recall: list.reduce((a, b) => a + b, 0) / list.length,
          questions: list.length,
        });
      }
  return {
    model: opts.embedder.name,
    conversations: perConv,
    cells,
    turnsPerSecond: totalWrite > 0 ? totalTurns / totalWrite : 0,
  };
}
