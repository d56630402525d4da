/**
 * @module server/metrics
 * Prometheus metrics with the article's names (seed 004, "Instrument the pipeline"), in a
 * dedicated registry (never prom-client's global one, so two services in one process or a
 * test run do not collide).
 *
 * `Metrics` implements the `MetricsSink` port (ports/metrics.ts) the memory layer calls. This
 * module has no HTTP framework in it, so the library can use it without the server.
 *
 * Labels are bounded: tiers come from the fixed lattice, and free-form reasons / patterns are
 * normalised to `[a-z0-9_]{1,48}`. `memory_writes_total` deliberately has no `principal`
 * label (the article shows one): principals are unbounded, and per-principal counts belong in
 * the audit log, not in a time series.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SourceTier } from '../core/trust.js';
import { noopMetrics, type EntriesCollector, type MetricsSink } from '../ports/metrics.js';

export { noopMetrics, type EntriesCollector, type MetricsSink };

/** Normalise a free-form label value so a caller cannot explode cardinality. */
export function labelValue(s: string): string {
  const v = s
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48);
  return v.length === 0 ? 'unknown' : v;
}

export interface MetricsOptions {
  /** Also collect Node process metrics (default false: tests stay quiet). */
  readonly defaultMetrics?: boolean;
}

/** The service's metrics. One instance per service; pass it as a `MetricsSink` below. */
export class Metrics implements MetricsSink {
  /** The dedicated registry `/metrics` serialises. */
  readonly registry = new Registry();
  readonly #writes: Counter<'trust'>;
  readonly #rejected: Counter<'reason'>;
  readonly #reads: Counter<'trust_tier'>;
  readonly #signals: Counter<'pattern'>;
  readonly #http: Histogram<'method' | 'route' | 'status'>;
  readonly #embedding: Histogram;
  #collector: EntriesCollector | undefined;

  constructor(opts: MetricsOptions = {}) {
    const registers = [this.registry];
    this.#writes = new Counter({
      name: 'memory_writes_total',
      help: 'Committed memory writes by source tier.',
      labelNames: ['trust'],
      registers,
    });
    this.#rejected = new Counter({
      name: 'memory_writes_rejected_total',
      help: 'Memory writes refused or held for review, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.#reads = new Counter({
      name: 'memory_reads_total',
      help: 'Entries returned by reads, by source tier.',
      labelNames: ['trust_tier'],
      registers,
    });
    this.#signals = new Counter({
      name: 'memory_poisoning_signals_total',
      help: 'Poisoning detector findings, by pattern.',
      labelNames: ['pattern'],
      registers,
    });
    const entries = (): EntriesCollector | undefined => this.#collector;
    new Gauge({
      name: 'memory_entries_current',
      help: 'Live (unexpired, undeleted) entries by source tier.',
      labelNames: ['trust'],
      registers,
      // prom-client calls this on every scrape; a failing collector leaves the gauge stale
      // rather than failing the whole scrape.
      async collect() {
        const collector = entries();
        if (collector === undefined) return;
        try {
          const counts = await collector();
          this.reset();
          for (const [tier, n] of Object.entries(counts))
            if (typeof n === 'number') this.set({ trust: tier }, n);
        } catch {
          /* keep the last values */
        }
      },
    });
    this.#http = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.#embedding = new Histogram({
      name: 'memory_embedding_duration_seconds',
      help: 'Time spent in the embedding model per call (cache misses only).',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    if (opts.defaultMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  recordWrite(tier: SourceTier): void {
    this.#writes.inc({ trust: tier });
  }
  recordRejected(reason: string): void {
    this.#rejected.inc({ reason: labelValue(reason) });
  }
  recordRead(tier: SourceTier): void {
    this.#reads.inc({ trust_tier: tier });
  }
  recordSignal(pattern: string): void {
    this.#signals.inc({ pattern: labelValue(pattern) });
  }
  observeEmbedding(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.#embedding.observe(seconds);
  }
  setEntriesCollector(fn: EntriesCollector): void {
    this.#collector = fn;
  }

  /** Record one HTTP request (`route` is the matched pattern, never the raw path). */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.#http.observe({ method, route, status: String(status) }, seconds);
  }

  /** The Prometheus text exposition and its content type. */
  async expose(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
