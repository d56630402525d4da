import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
const N = Number(process.argv[2] ?? 100000), D = 384;
const db = await PGlite.create({ extensions: { vector } });
await db.exec('CREATE EXTENSION vector; CREATE TABLE t (id int primary key, owner text, e vector(384), r real[])');
console.log((await db.query("select extversion from pg_extension where extname='vector'")).rows);
function rv() { const a = new Float32Array(D); let s = 0; for (let i=0;i<D;i++){ a[i]=Math.random()*2-1; s+=a[i]*a[i]; } s=Math.sqrt(s); for (let i=0;i<D;i++) a[i]/=s; return a; }
let t0 = performance.now();
const B = 1000;
for (let i = 0; i < N; i += B) {
  const ids = [], vs = [];
  for (let j = i; j < Math.min(N, i+B); j++) { ids.push(j); vs.push('[' + Array.from(rv()).join(',') + ']'); }
  await db.query('INSERT INTO t (id, owner, e) SELECT * FROM (SELECT i, $3::text, v::vector FROM unnest($1::int[], $2::text[]) u(i, v)) s', [ids, vs, 'user:a']);
}
console.log('load ms', performance.now() - t0);
const q = '[' + Array.from(rv()).join(',') + ']';
const time = async (label) => { const ts=[]; for (let k=0;k<20;k++){ const t=performance.now(); await db.query('SELECT id FROM t ORDER BY e <=> $1::vector LIMIT 10', [q]); ts.push(performance.now()-t);} ts.sort((a,b)=>a-b); console.log(label, 'p50', ts[10].toFixed(2), 'max', ts[19].toFixed(2)); };
await time('exact');
await db.exec("SET maintenance_work_mem = '1GB'");
t0 = performance.now();
await db.exec('CREATE INDEX ON t USING hnsw (e vector_cosine_ops)');
console.log('hnsw build ms', performance.now() - t0);
await time('hnsw');
