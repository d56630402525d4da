/**
 * ANN index management (adapters/sql/vector-index): the thresholds, and on PGlite the automatic
 * IVFFlat build, the doubling rebuild, and that a principal still gets `limit` of its own rows
 * through the index (iterative scan past other principals' rows that RLS filters out).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { nextCheckAt, planIndex } from '../../src/adapters/sql/vector-index.js';
import type { StoredEntry } from '../../src/ports/storage.js';
import { entry, point } from '../helpers/vector-points.js';

describe('vector index policy', () => {
  it('exact below the threshold, lists ≈ √rows at it, rebuild once rows double', () => {
    expect(planIndex(9_999, undefined, 10_000)).toBeUndefined();
    expect(planIndex(10_000, undefined, 10_000)).toBe(100);
    expect(planIndex(19_999, 100, 10_000)).toBeUndefined();
    expect(planIndex(20_000, 100, 10_000)).toBe(141);
    expect(nextCheckAt(0, undefined, 10_000)).toBe(10_000);
    expect(nextCheckAt(10_000, 100, 10_000)).toBe(20_000);
  });
});

describe('PGlite IVFFlat maintenance', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
  });
  afterAll(async () => {
    await db.close();
  });

  it('builds at the threshold, rebuilds on doubling, and serves each principal its own rows', async () => {
    const b = await PgliteBackend.open({ instance: db, vectorIndex: { minRows: 400, probes: 2 } });
    const indexes = async (): Promise<string[]> =>
      (
        await db.query<{ n: string }>(
          "SELECT indexname AS n FROM pg_indexes WHERE indexname LIKE 'entries_emb_ivf_%'",
        )
      ).rows.map((r) => r.n);
    // 360 rows of user:a, 40 of user:b interleaved in log order.
    const es: StoredEntry[] = [];
    for (let i = 0; i < 400; i++) es.push(entry(i, i % 10 === 0 ? 'user:b' : 'user:a'));
    await b.transaction(async (tx) => {
      await tx.putEntries!(es.slice(0, 300));
    });
    expect(await indexes()).toEqual([]);
    await b.transaction(async (tx) => {
      await tx.putEntries!(es.slice(300));
    });
    const s1 = await b.maintainVectorIndex(); // joins (or follows) the automatic run
    expect(s1.rows).toBe(400);
    expect(await indexes()).toEqual(['entries_emb_ivf_20']);

    // At this size the planner would rather scan; make it use the index, as it does at scale.
    await db.exec('SET enable_seqscan = off');
    const plan = await db.transaction(async (tx) => {
      await tx.exec('SET LOCAL ROLE memwarden_system');
      return (
        await tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM entries ORDER BY embedding_vec <=> '${JSON.stringify(Array.from(point(5)))}' LIMIT 5`,
        )
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    });
    expect(plan).toContain('entries_emb_ivf_20');
    // user:b owns 10% of the rows: the index scan must keep probing until it has `limit`.
    const B = b.asPrincipal('user:b');
    const hits = await B.searchEntries({ embedding: point(5), nowNs: 1n, limit: 30 });
    expect(hits).toHaveLength(30);
    expect(hits.every((h) => h.entry.owner === 'user:b')).toBe(true);
    const scores = hits.map((h) => h.vectorScore!);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);

    // Recall against the exact scan.
    const A = b.asPrincipal('user:a');
    let found = 0;
    for (let q = 0; q < 10; q++) {
      const approx = new Set(
        (await A.searchEntries({ embedding: point(1000 + q), nowNs: 1n, limit: 10 })).map(
          (h) => h.entry.id,
        ),
      );
      await db.exec('SET enable_indexscan = off; RESET enable_seqscan');
      const exact = await A.searchEntries({ embedding: point(1000 + q), nowNs: 1n, limit: 10 });
      await db.exec('RESET enable_indexscan; SET enable_seqscan = off');
      found += exact.filter((h) => approx.has(h.entry.id)).length;
    }
    expect(found / 100).toBeGreaterThanOrEqual(0.8);

    await db.exec('RESET enable_seqscan');
    // Doubling (400 → 800 ≥ 2·20²) rebuilds with lists = √800 ≈ 28 and drops the old index.
    await b.transaction(async (tx) => {
      await tx.putEntries!(Array.from({ length: 400 }, (_, i) => entry(400 + i, 'user:a')));
    });
    const s2 = await b.maintainVectorIndex();
    expect(s2.rows).toBe(800);
    expect(await indexes()).toEqual(['entries_emb_ivf_28']);
    await b.close();
  });
});

describe('PGlite IVFFlat maintenance off the write path (onWrite: false, ADR 0024)', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
  });
  afterAll(async () => {
    await db.close();
  });
  const indexes = async (): Promise<string[]> =>
    (
      await db.query<{ n: string }>(
        "SELECT indexname AS n FROM pg_indexes WHERE indexname LIKE 'entries_emb_ivf_%'",
      )
    ).rows.map((r) => r.n);

  it('writes crossing a threshold build nothing; the next open builds, and its searches use it', async () => {
    const opts = { minRows: 400, probes: 8 } as const;
    const a = await PgliteBackend.open({ instance: db, vectorIndex: { ...opts, onWrite: false } });
    const es = Array.from({ length: 800 }, (_, i) => entry(i, i % 10 === 0 ? 'user:b' : 'user:a'));
    await a.transaction(async (tx) => {
      await tx.putEntries!(es.slice(0, 500));
    });
    await a.putEntries(es.slice(500, 600)); // the direct path too
    await new Promise((r) => setTimeout(r, 50)); // an automatic run would have started by now
    expect(await indexes()).toEqual([]);
    // Exact answers (no index yet: an exact scan) for ten queries, over the 600 rows so far.
    const A = a.asPrincipal('user:a');
    const exact: string[][] = [];
    for (let q = 0; q < 10; q++)
      exact.push(
        (await A.searchEntries({ embedding: point(2000 + q), nowNs: 1n, limit: 10 })).map(
          (h) => h.entry.id,
        ),
      );
    // A process opening the store (e.g. one without the read model) brings the index up to date.
    const b = await PgliteBackend.open({ instance: db, vectorIndex: opts });
    expect(await indexes()).toEqual(['entries_emb_ivf_24']); // √600 ≈ 24
    // …and keeps it current from its own write path (onWrite defaults to true): 600 → 1,152 rows
    // crosses 2·24² and rebuilds.
    await b.transaction(async (tx) => {
      await tx.putEntries!(es.slice(600));
      await tx.putEntries!(Array.from({ length: 352 }, (_, i) => entry(800 + i, 'user:a')));
    });
    await b.maintainVectorIndex(); // joins (or follows) the automatic run
    expect(await indexes()).toEqual(['entries_emb_ivf_34']);
    // Search through the index in that process: each principal its own rows, and the exact
    // answers found (recall; the rows added since are in other clusters' order, so compare ids
    // present in both).
    await db.exec('SET enable_seqscan = off');
    const B = b.asPrincipal('user:b');
    const hb = await B.searchEntries({ embedding: point(5), nowNs: 1n, limit: 20 });
    expect(hb).toHaveLength(20);
    expect(hb.every((h) => h.entry.owner === 'user:b')).toBe(true);
    let found = 0;
    for (let q = 0; q < 10; q++) {
      const approx = new Set(
        (
          await b
            .asPrincipal('user:a')
            .searchEntries({ embedding: point(2000 + q), nowNs: 1n, limit: 40 })
        ).map((h) => h.entry.id),
      );
      found += exact[q]!.filter((id) => approx.has(id)).length;
    }
    await db.exec('RESET enable_seqscan');
    expect(found / 100).toBeGreaterThanOrEqual(0.8);
    // An explicit call still builds in the onWrite:false process.
    expect((await a.maintainVectorIndex()).lists).toBe(34);
  });

  it('Memory.open: the read model turns write-path builds off; readModel:false keeps them', async () => {
    const { Memory } = await import('../../src/open.js');
    const tracker = (m: { storageBackend: unknown }) =>
      (m.storageBackend as unknown as { s: { index: { onWrite: boolean; auto: boolean } } }).s
        .index;
    const dir = await import('node:fs').then((fs) =>
      fs.mkdtempSync(`${(process.env.TMPDIR ?? '/tmp').replace(/\/$/, '')}/mw-vi-`),
    );
    const withModel = await Memory.open({
      dataDir: dir,
      ephemeral: true,
      embedder: 'deterministic',
    });
    expect(tracker(withModel)).toMatchObject({ auto: true, onWrite: false });
    await withModel.close();
    const without = await Memory.open({
      dataDir: dir,
      ephemeral: true,
      embedder: 'deterministic',
      readModel: false,
    });
    expect(tracker(without)).toMatchObject({ auto: true, onWrite: true });
    await without.close();
    (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
  });
});
