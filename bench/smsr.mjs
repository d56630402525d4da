/**
 * Group `smsr` (issue 6): SMSR component 1 verification per entry (HMAC tag check through
 * `MacKeyring.check` over a typical ~700-byte canonical record) and component 2's own overhead
 * per query at m = 20, k = 5, n_runs = 7 with the generator and judge stubbed to resolve at
 * once (sampling, run bookkeeping, verdict aggregation, certificate). Denominators measured in
 * the same run (absolute figures: best of three medians): one SHA-256 of the record, and an empty `Promise.all` of 14 resolved promises.
 */
import { hash, randomBytes } from 'node:crypto';
import { MacKeyring } from '../dist/core/crypto/hmac.js';
import { SeededWords, certificate } from '../dist/core/smsr/index.js';
import { SmoothedRetrieval } from '../dist/memory/read/smsr.js';
import { measureAsyncUs, measureUs, round } from './lib.mjs';

/**
 * Best of three medians: on these shared 2-core machines a neighbour's burst can double one
 * median; the smallest of three is the better estimate of the operation's own cost.
 */
function best3(fn, opts) {
  return Math.min(measureUs(fn, opts), measureUs(fn, opts), measureUs(fn, opts));
}
async function best3Async(fn, opts) {
  const a = await measureAsyncUs(fn, opts);
  const b = await measureAsyncUs(fn, opts);
  const c = await measureAsyncUs(fn, opts);
  return Math.min(a, b, c);
}

export async function run({ log }) {
  log('component 1: MacKeyring.check on a 700-byte record');
  const keys = new MacKeyring();
  keys.add('mac-1', randomBytes(32));
  keys.add('mac-2', randomBytes(32)); // a rotated keyring: verification looks up by key id
  const record = new Uint8Array(randomBytes(700));
  const { kid, tag } = keys.tag(record);
  const oldTag = (() => {
    const k = new MacKeyring();
    k.add('mac-1', randomBytes(32));
    return k.tag(record).tag;
  })();
  if (!keys.check(kid, record, tag).ok) throw new Error('bench: tag does not verify');
  if (keys.check('mac-1', record, oldTag).ok) throw new Error('bench: forged tag verifies');
  const c1 = best3(() => keys.check(kid, record, tag), { perBatch: 2000 });
  const c1Bad = best3(() => keys.check('mac-1', record, oldTag), { perBatch: 2000 });
  const sha = best3(() => hash('sha256', record, 'buffer'), { perBatch: 2000 });

  log('component 2: overhead at m = 20, n_runs = 7, LLM calls stubbed');
  const pool = Array.from({ length: 20 }, (_, i) => ({
    id: `mem-${i}`,
    content: `policy note ${i}`,
  }));
  const verdicts = ['correct', 'malicious', 'neither'];
  let j = 0;
  const svc = new SmoothedRetrieval({
    retrieve: async () => pool,
    generate: async (_q, ctx) => ctx[0].content,
    judge: async () => verdicts[j++ % 3],
    m: 20,
    k: 5,
    runs: 7,
    words: new SeededWords('bench'),
  });
  const c2 = await best3Async(() => svc.answerFromPool('what is the limit?', pool), {
    perBatch: 500,
    batches: 21,
  });
  const resolved = await best3Async(
    () => Promise.all(Array.from({ length: 14 }, () => Promise.resolve(1))),
    { perBatch: 500, batches: 21 },
  );
  const cert = best3(() => certificate(1, 20, 5, 7), { perBatch: 500 });

  const figures = {
    c1_verify_us: round(c1),
    c1_verify_forged_us: round(c1Bad),
    c2_overhead_us: round(c2),
    c2_certificate_us: round(cert),
    sha256_700b_us: round(sha),
    promise_all_14_us: round(resolved),
  };
  const ratios = {
    c1_verify_over_sha256: round(c1 / sha),
    c2_overhead_over_promise_all_14: round(c2 / resolved),
  };
  const targets = [
    { name: 'c1_verify_us', value: figures.c1_verify_us, op: '<=', limit: 2 },
    { name: 'c2_overhead_us', value: figures.c2_overhead_us, op: '<=', limit: 100 },
  ].map((t) => ({ ...t, ok: t.value <= t.limit }));
  return { figures, ratios, targets };
}
