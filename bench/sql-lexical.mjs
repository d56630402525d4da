#!/usr/bin/env node
/**
 * The SQL lexical path at scale (ADR 0075): text-only `searchEntries` in one principal's view
 * of a PostgreSQL server backend — the path the read model falls back to (`--no-read-model`,
 * a principal over the model's bound, a process resyncing). Standalone:
 *
 *   npm run build && MEMWARDEN_BENCH_DATABASE_URL=postgres://… node bench/sql-lexical.mjs \
 *     --from <schema of bench load-pg's 100k fixture> [--queries 40] [--rounds 3]
 *
 * The rows are copied (system scope, in SQL) from `--from`'s `entries` into a fresh schema
 * migrated by this build, so both builds search the same rows. With
 * MEMWARDEN_BENCH_BASELINE=<an older dist> the same schema is searched through that build's
 * backend too, interleaved round by round (ratios measured in one run). The principal is the
 * fixture's largest owner. Figures: p50 / p90 per build (ms, wall clock). Progress on stderr.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    queries: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
});
const url = process.env.MEMWARDEN_BENCH_DATABASE_URL;
if (url === undefined || values.from === undefined) {
  process.stderr.write(
    'usage: MEMWARDEN_BENCH_DATABASE_URL=… node bench/sql-lexical.mjs --from <schema>\n',
  );
  process.exit(2);
}
const from = values.from;
if (!/^[a-z_][a-z0-9_]*$/.test(from)) throw new Error('--from must be a schema name');
const log = (m) => process.stderr.write(`sql-lexical: ${m}\n`);
const schema = `mw_sqllex_${process.pid}`;

const here = path.dirname(fileURLToPath(import.meta.url));
const load = async (dist) => (await import(path.resolve(dist, 'adapters/pg/index.js'))).PgBackend;
const builds = [['this build', await load(path.join(here, '../dist'))]];
if (process.env.MEMWARDEN_BENCH_BASELINE)
  builds.unshift(['baseline', await load(process.env.MEMWARDEN_BENCH_BASELINE)]);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

const c = new pg.Client({ connectionString: url });
await c.connect();
let backends = [];
try {
  // This build migrates the fresh schema (migration 60 included), then the rows are copied.
  const mine = await builds.at(-1)[1].open({ connectionString: url, schema, feed: false });
  backends.push(mine);
  const cols =
    'id, owner, tier, bytes, leaf_index, mac_kid, mac, created_ns, expires_ns, content, embedding, ' +
    'superseded_by, deleted, writer, kind, uri, src_hash, memory_id, event_ns, metadata, run_id, agent_id, lex_len';
  const { rows: vec } = await c.query(
    `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'entries' AND column_name = 'embedding_vec'`,
    [schema],
  );
  const all = vec.length > 0 ? `${cols}, embedding_vec` : cols;
  log(`copying ${from}.entries into ${schema} (system scope)…`);
  await c.query('BEGIN');
  await c.query(`SELECT set_config('role', 'memwarden_system', true)`);
  await c.query(`INSERT INTO ${schema}.entries (${all}) SELECT ${all} FROM ${from}.entries`);
  const { rows: owners } = await c.query(
    `SELECT owner, count(*)::int AS n FROM ${schema}.entries GROUP BY owner ORDER BY 2 DESC LIMIT 1`,
  );
  const { rows: texts } = await c.query(
    `SELECT content FROM ${schema}.entries WHERE owner = $1 ORDER BY leaf_index LIMIT $2`,
    [owners[0].owner, Number(values.queries)],
  );
  await c.query('COMMIT');
  await c.query(`ANALYZE ${schema}.entries`);
  const principal = owners[0].owner;
  log(`principal ${principal} owns ${owners[0].n} rows`);
  // Queries: the first words of stored sentences (3–4 terms each, as the bench's questions).
  const queries = texts.map((r) => String(r.content).split(/\s+/).slice(0, 5).join(' '));
  for (const [, B] of builds.slice(0, -1))
    backends.unshift(await B.open({ connectionString: url, schema, feed: false }));
  const views = backends.map((b) => b.asPrincipal(principal));
  const times = builds.map(() => []);
  const seen = [];
  let same = 0;
  for (let r = 0; r < Number(values.rounds); r++) {
    for (let i = 0; i < views.length; i++) {
      for (const text of queries) {
        const t0 = performance.now();
        const hits = await views[i].searchEntries({ text, limit: 10, nowNs: 1n });
        const dt = performance.now() - t0;
        if (r > 0) times[i].push(dt); // round 0 warms caches and plans
        if (hits.length === 0) throw new Error(`no hits for ${text}`);
        if (r === 0)
          (seen[i] ??= []).push(hits.map((h) => `${h.entry.id}:${h.lexicalScore}`).join(','));
      }
    }
    log(`round ${r + 1}/${values.rounds}`);
  }
  // Exactness: both builds return the same hits with the same BM25 scores, query by query.
  if (seen.length === 2) same = seen[0].filter((x, k) => x === seen[1][k]).length;
  const out = {};
  builds.forEach(([name], i) => {
    out[name] = {
      p50_ms: +pct(times[i], 50).toFixed(2),
      p90_ms: +pct(times[i], 90).toFixed(2),
      n: times[i].length,
    };
  });
  if (builds.length === 2) out.identical_results = `${same}/${queries.length}`;
  if (builds.length === 2)
    out.baseline_over_this_p50 = +(out.baseline.p50_ms / out['this build'].p50_ms).toFixed(1);
  process.stdout.write(JSON.stringify({ rows: owners[0].n, schema, ...out }, null, 2) + '\n');
} finally {
  for (const b of backends) await b.close().catch(() => undefined);
  if (!values.keep) await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await c.end();
}
