/**
 * @module eval/detect/workload
 * The shipped default detection measured where it runs: `Memory.add` / `Memory.search` of a
 * `Memory` with default `autoDetection` (ADR 0016), the evaluation's embedder (MiniLM by
 * default), an in-memory store. One user principal plays a realistic mixed benign workload —
 * held-out corpus entries over the seven §6.1 categories in three tiers, LangGraph-style JSON
 * values, short notes — interleaved with searches from the benign query set (so MemSAD runs on
 * a real, mixed history). Every write that lands in the review queue is a false review. Then
 * the victim queries are asked and the attacks' poisons written through the same path: the
 * share held is the pipeline's end-to-end TPR.
 */
import { MemoryBackend } from '../../adapters/memory/index.js';
import { systemClock, systemRandom } from '../../adapters/system/index.js';
import { isMemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import type { AutoDetectionOptions } from '../../memory/detect/calibration.js';
import { Ledger } from '../../memory/log/ledger.js';
import { Memory } from '../../memory/memory.js';
import type { Embedder } from '../../ports/embedder.js';
import type { AttackSet } from './attacks.js';
import { type Rng, pick } from './rng.js';
import { MemoryKeySource } from '../../testing/doubles.js';

export interface WorkloadPhase {
  readonly writes: number;
  readonly stored: number;
  /** Writes held for review: false reviews (every write here is benign). */
  readonly held: number;
  readonly falseReviewRate: number;
  /** Refused as near-duplicates of an earlier memory (not a review). */
  readonly nearDuplicate: number;
  readonly reasons: Record<string, number>;
}

export interface WorkloadReport {
  readonly principalWrites: number;
  readonly searches: number;
  /** While the principal has fewer than `minOwn` trusted memories (generic reference). */
  readonly coldStart: WorkloadPhase;
  /** Afterwards (own reference, MemSAD+ on). */
  readonly warm: WorkloadPhase;
  readonly overall: WorkloadPhase;
  readonly byKind: Record<string, WorkloadPhase>;
  /** Poisons written after the victim queries were asked: held / stored / near-duplicate. */
  readonly attacks: { attack: string; poisons: number; held: number; tpr: number; nearDuplicate: number; reasons: Record<string, number> }[];
  readonly minOwn: number;
}

interface Tally {
  writes: number;
  stored: number;
  held: number;
  nearDuplicate: number;
  reasons: Record<string, number>;
}

const newTally = (): Tally => ({ writes: 0, stored: 0, held: 0, nearDuplicate: 0, reasons: {} });
const phase = (t: Tally): WorkloadPhase => ({ ...t, falseReviewRate: t.writes === 0 ? 0 : t.held / t.writes });

const JSON_KEYS = ['text', 'note', 'value', 'fact'];

export async function runWorkload(o: {
  embedder: Embedder;
  benign: readonly string[];
  queries: readonly string[];
  victimQueries: readonly string[];
  attacks: readonly AttackSet[];
  rng: Rng;
  auto?: AutoDetectionOptions;
  /** One search after every this many writes (default 2). */
  searchEvery?: number;
}): Promise<WorkloadReport> {
  const storage = await MemoryBackend.open();
  const ledger = await Ledger.open({ storage, keys: new MemoryKeySource(), clock: systemClock, random: systemRandom });
  const auto = o.auto ?? {};
  const minOwn = auto.minOwn ?? 50;
  const mem = new Memory({
    ledger,
    storage,
    embedder: o.embedder,
    clock: systemClock,
    random: systemRandom,
    autoDetection: auto,
  });
  try {
    const user = (await mem.createPrincipal('user', 'workload')).id;
    const cold = newTally();
    const warm = newTally();
    const all = newTally();
    const kinds: Record<string, Tally> = {};
    let ownTrusted = 0;
    let searches = 0;
    const searchEvery = o.searchEvery ?? 2;
    const tiers: SourceTier[] = ['USER_VERIFIED', 'USER_OBSERVED', 'USER_OBSERVED', 'EXTERNAL_TOOL'];
    for (let i = 0; i < o.benign.length; i++) {
      const base = o.benign[i] as string;
      // A realistic mix: plain facts in three tiers, JSON values (LangGraph store), short notes.
      const roll = o.rng();
      const kind = roll < 0.15 ? 'json' : roll < 0.25 ? 'short' : 'fact';
      const content =
        kind === 'json'
          ? JSON.stringify({ [pick(o.rng, JSON_KEYS)]: base })
          : kind === 'short'
            ? base.split(/[,.;:]/)[0]!.trim().split(' ').slice(0, 5).join(' ')
            : base;
      const tier = kind === 'fact' ? pick(o.rng, tiers) : 'USER_OBSERVED';
      const tallies = [ownTrusted < minOwn ? cold : warm, all, (kinds[kind] ??= newTally())];
      for (const t of tallies) t.writes++;
      try {
        const r = await mem.add(content, { principal: user, tier });
        if (r.status === 'stored') {
          for (const t of tallies) t.stored++;
          if (tier === 'USER_VERIFIED' || tier === 'USER_OBSERVED') ownTrusted++;
        } else {
          for (const t of tallies) {
            t.held++;
            for (const why of r.reasons) t.reasons[why] = (t.reasons[why] ?? 0) + 1;
          }
        }
      } catch (e) {
        if (!(isMemwardenError(e) && e.code === 'STORAGE_CONFLICT')) throw e;
        for (const t of tallies) t.nearDuplicate++;
      }
      if ((i + 1) % searchEvery === 0) {
        await mem.search(o.queries[searches % o.queries.length] as string, { principal: user });
        searches++;
      }
    }
    // The attacker's victims ask their questions; then the poisons arrive.
    for (const q of o.victimQueries) {
      await mem.search(q, { principal: user });
      searches++;
    }
    const attacks: WorkloadReport['attacks'] = [];
    for (const a of o.attacks) {
      for (const q of a.victimQueries.slice(0, 5)) {
        await mem.search(q, { principal: user });
        searches++;
      }
      let held = 0;
      let dup = 0;
      const reasons: Record<string, number> = {};
      for (const p of a.poisons) {
        try {
          const r = await mem.add(p, { principal: user, tier: 'USER_OBSERVED' });
          if (r.status === 'pending_review') {
            held++;
            for (const why of r.reasons) reasons[why] = (reasons[why] ?? 0) + 1;
          }
        } catch (e) {
          if (!(isMemwardenError(e) && e.code === 'STORAGE_CONFLICT')) throw e;
          dup++;
        }
      }
      attacks.push({
        attack: a.attack,
        poisons: a.poisons.length,
        held,
        tpr: a.poisons.length === 0 ? 0 : held / a.poisons.length,
        nearDuplicate: dup,
        reasons,
      });
    }
    return {
      principalWrites: all.writes,
      searches,
      coldStart: phase(cold),
      warm: phase(warm),
      overall: phase(all),
      byKind: Object.fromEntries(Object.entries(kinds).map(([k, t]) => [k, phase(t)])),
      attacks,
      minOwn,
    };
  } finally {
    await mem.close();
  }
}
