/**
 * Group `smoothed-search` (issue 19): the overhead smoothing adds to one `Memory.search`, model
 * calls excluded. A real Memory (in-memory store with the verified read model, real signatures,
 * MACs and log; the host's CSPRNG; deterministic 384-d embedder, query embedding cached) over
 * N entries of one principal (default 2,000; MEMWARDEN_BENCH_SMSR_N).
 *
 * - `search_ms`: a plain search (limit 5, the default);
 * - `smoothed_search_ms`: the same query with smoothing { m: 21, k: 5, runs: 5 } — the top-21
 *   verified pool, 5 uniform 5-subsets from the CSPRNG, 5 sealed renderings, the certificate;
 * - `search_21_ms`: a plain search with limit 21 (the same pool, no ablation).
 * Batches of the three are interleaved, so a neighbour's burst hits all three alike.
 * `smoothed_search_overhead_ms` = smoothed − plain (target ≤ 3 ms); `smoothing_only_overhead_ms`
 * = smoothed − search_21 (the ablation's own cost).
 */
import { performance } from 'node:perf_hooks';
import { MemoryBackend } from '../dist/adapters/memory/index.js';
import { DeterministicEmbedder } from '../dist/adapters/embeddings/deterministic.js';
import { systemRandom } from '../dist/adapters/system/index.js';
import { Ledger } from '../dist/memory/log/ledger.js';
import { Memory } from '../dist/memory/memory.js';
import { withReadModel } from '../dist/memory/read/read-model.js';
import { ManualClock, MemoryKeySource } from '../dist/testing/index.js';
import { median, round } from './lib.mjs';

const TOPICS = [
  'invoice',
  'travel',
  'laptop',
  'office',
  'holiday',
  'payroll',
  'security',
  'backup',
];

export async function run({ log }) {
  const n = Number(process.env.MEMWARDEN_BENCH_SMSR_N ?? 2000);
  const storage = withReadModel(await MemoryBackend.open());
  const clock = new ManualClock();
  const ledger = await Ledger.open({
    storage,
    keys: new MemoryKeySource(),
    clock,
    random: systemRandom,
  });
  const mem = new Memory({
    ledger,
    storage,
    embedder: new DeterministicEmbedder(),
    clock,
    random: systemRandom,
  });
  const { id: principal } = await mem.createPrincipal('user', 'bench');
  log(`writing ${n} memories`);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await mem.add(
      `Note ${i}: the ${TOPICS[i % TOPICS.length]} policy item ${i * 7919} applies to team ${i % 41}`,
      {
        principal,
        ttlMs: null,
      },
    );
    if (r.status !== 'stored') throw new Error('bench: a fixture write was held');
    if (i > 0 && i % 500 === 0) log(`  ${i}/${n} (${Math.round(performance.now() - t0)} ms)`);
  }
  const query = 'what is the invoice policy for team 7?';
  const plain = () => mem.search(query, { principal });
  const plain21 = () => mem.search(query, { principal, limit: 21 });
  const smoothed = () => mem.search(query, { principal, smoothing: { m: 21, k: 5, runs: 5 } });
  const check = await smoothed();
  if (check.smoothing?.contexts.length !== 5 || check.smoothing.poolSize !== 21)
    throw new Error('bench: smoothing did not return 5 contexts over 21');
  for (let i = 0; i < 30; i++) {
    await plain();
    await plain21();
    await smoothed();
  }
  log('measuring (interleaved batches)');
  const per = 20;
  const batches = 25;
  const a = [];
  const b = [];
  const c = [];
  const time = async (fn) => {
    const s = performance.now();
    for (let i = 0; i < per; i++) await fn();
    return (performance.now() - s) / per;
  };
  for (let i = 0; i < batches; i++) {
    a.push(await time(plain));
    b.push(await time(smoothed));
    c.push(await time(plain21));
  }
  await mem.close();
  const search = median(a);
  const sm = median(b);
  const s21 = median(c);
  const overhead = sm - search;
  return {
    figures: {
      smoothed_search_entries: n,
      search_ms: round(search, 3),
      smoothed_search_ms: round(sm, 3),
      search_21_ms: round(s21, 3),
      smoothed_search_overhead_ms: round(overhead, 3),
      smoothing_only_overhead_ms: round(sm - s21, 3),
    },
    ratios: {
      smoothed_search_over_search: round(sm / search, 3),
      smoothed_search_over_search_21: round(sm / s21, 3),
    },
    targets: [
      {
        name: 'smoothed_search_overhead_ms',
        value: round(overhead, 3),
        op: '<=',
        limit: 3,
        ok: overhead <= 3,
      },
    ],
  };
}
