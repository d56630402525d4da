/**
 * @module ports/metrics
 * The metric calls the memory layer makes (article: "Instrument the pipeline"). The server
 * implements it with Prometheus; the library default records nothing. Never throws.
 */
import type { SourceTier } from '../core/trust.js';

/** Current entry counts by tier, for the `memory_entries_current` gauge. */
export type EntriesCollector = () =>
  | Promise<Partial<Readonly<Record<SourceTier, number>>>>
  | Partial<Readonly<Record<SourceTier, number>>>;

export interface MetricsSink {
  /** A write committed at `tier`. */
  recordWrite(tier: SourceTier): void;
  /** A write refused or held (`instruction_marker`, `quota`, `oversize`, …). */
  recordRejected(reason: string): void;
  /** An entry of `tier` returned by a read. */
  recordRead(tier: SourceTier): void;
  /** A poisoning detector fired on `pattern` (at write or retrieval). */
  recordSignal(pattern: string): void;
  /** Seconds one embedding call spent in the model (cache misses only). */
  observeEmbedding(seconds: number): void;
  /** Install the function the entries gauge reads at scrape time. */
  setEntriesCollector(fn: EntriesCollector): void;
}

/** A sink that records nothing (library use without a server). */
export const noopMetrics: MetricsSink = {
  recordWrite: () => undefined,
  recordRejected: () => undefined,
  recordRead: () => undefined,
  recordSignal: () => undefined,
  observeEmbedding: () => undefined,
  setEntriesCollector: () => undefined,
};
