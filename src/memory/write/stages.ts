/**
 * @module memory/write/stages
 * The write pipeline as explicit stages (issue 17, ADR 0029). Every write of every channel is a
 * {@link WriteDraft} that runs through the same ordered stages:
 *
 *   limits → principal (tier ceiling) → ttl (per-tier ceiling) → lineage → extraction →
 *   embedding → screening (hold) → consolidation (dedupe; skipped by keyed writes) →
 *   flood control (hold; issue 19) → commit (quota, sign, log, metrics)
 *
 * A stage returns the draft to go on with, a hold (the findings that send it to the review
 * queue), a finished result, or several drafts (extraction's facts, each running the rest of
 * the pipeline); it throws a coded `MemwardenError` to refuse. Stages are values, so a later
 * stage can replace one: issue 20's consolidation (ADD / UPDATE / NOOP) takes the place of the
 * near-duplicate stage (`WritePathDeps.dedupe`).
 */
import type { SignedEntry } from '../../core/entry/index.js';
import type { PrincipalKind, SourceTier } from '../../core/trust.js';
import type { StorageBackend } from '../../ports/storage.js';
import type { AddOptions, AddResult } from '../api.js';
import type { ResolvedLineage } from './lineage.js';
import type { JsonObject } from '../../core/entry/meta.js';
import type { Existing } from './consolidate.js';

/** A finding that holds a write for review. */
export interface HoldFinding {
  readonly reason: string;
  readonly detail: string;
}

/** One write moving through the pipeline. Stages return new drafts; none mutates one. */
export interface WriteDraft {
  /** The options the channel gave (the held payload replays them). */
  readonly opts: AddOptions;
  readonly principal: string;
  /** The signed content (for a graph object: its canonical encoding). */
  readonly content: string;
  /** What screening reads (a graph object's own text; the content otherwise). */
  readonly screenText: string;
  readonly kind: string;
  readonly tier: SourceTier;
  /** Whether the entry's embedding is stored (graph objects are not vector-searched). */
  readonly storeEmbedding: boolean;
  /** The writer's kind, once the principal stage ran. */
  readonly writerKind?: PrincipalKind | undefined;
  /** The TTL the entry gets (ms; null: never expires), once the ttl stage ran. */
  readonly ttl?: number | null | undefined;
  /** The lineage, once resolved (or given: updates keep the old version's, reviews replay). */
  readonly lineage?: ResolvedLineage | undefined;
  readonly embedding?: Float32Array | undefined;
  /** The entry this new version supersedes (an update). */
  readonly sup?: string | undefined;
  /** The reviewer who approved it (an approved review). */
  readonly rev?: string | undefined;
  /**
   * A step that commits in the entry's own transaction (a review's decision, reviews.ts):
   * if it fails, the entry is not written either (issue 17 finding 3).
   */
  readonly inCommit?:
    ((tx: StorageBackend, leafIndex: number, entry: SignedEntry) => Promise<void>) | undefined;
  /** Skip the Pattern 3 extraction stage (updates, graph objects, approved reviews). */
  readonly noExtraction?: boolean | undefined;
  /** The entry v2 fields (metadata, event time, scopes), checked by the limits stage. */
  readonly v2?:
    | {
        readonly meta?: JsonObject;
        readonly evt?: bigint;
        readonly run?: string;
        readonly agent?: string;
      }
    | undefined;
  /**
   * Consolidation's decision (the dedupe stage, issue 20): `UPDATE` of `target` (the draft's
   * `sup` is its version), or `ADD`, beside `conflict` when a lower tier may not supersede it.
   */
  readonly consolidation?:
    | { readonly event: 'UPDATE'; readonly target: Existing }
    | { readonly event: 'ADD'; readonly conflict?: Existing }
    | undefined;
  /** Consolidation decisions made again after losing a race to a concurrent update. */
  readonly attempt?: number | undefined;
}

export type StageResult =
  | { readonly next: WriteDraft }
  | { readonly hold: readonly HoldFinding[]; readonly draft: WriteDraft }
  | { readonly done: AddResult }
  | { readonly fanout: readonly WriteDraft[] }
  /** Run again from the earlier stage named (consolidation deciding again after a race). */
  | { readonly retry: string; readonly draft: WriteDraft };

/** One stage of the pipeline. `run` may answer synchronously (no extra microtask). */
export interface WriteStage {
  readonly name: string;
  run(d: WriteDraft): StageResult | Promise<StageResult>;
}

/** The stage names, in pipeline order (docs and metrics use them). */
export const STAGE_ORDER = [
  'limits',
  'principal',
  'ttl',
  'lineage',
  'extraction',
  'embedding',
  'screening',
  'dedupe',
  'flood',
  'commit',
] as const;
