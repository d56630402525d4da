/**
 * The PGlite worker thread (ADR 0025): one real PGlite (with pgvector, in `workerData.dataDir`
 * or in memory) whose calls arrive from `./worker.ts`'s `PgliteWorker` proxy on the main thread.
 *
 * Plain JavaScript on purpose: Node's worker_threads cannot run TypeScript, and this file is
 * loaded both from `src/` (tests run the TypeScript sources) and from `dist/` (the build copies
 * it). It imports only PGlite and pgvector.
 *
 * Messages from the main thread (`id` = the call to answer with `{ id, v }` or `{ id, err }`):
 *   { t: 'q', id, tx?, sql, params, opts }   query — inside transaction `tx` when given
 *   { t: 'x', id, tx?, sql, opts }           exec
 *   { t: 'b', id, tx }                       begin transaction `tx` (PGlite's `transaction`);
 *                                            answered once it has begun
 *   { t: 'rb', id, tx }                      tx.rollback()
 *   { t: 'e', id, tx, commit }               the main thread's callback returned (commit) or threw
 *   { t: 'l', lock }                         take PGlite's query lock (`runExclusive`) …
 *   { t: 'u', lock }                         … and release it
 *   { t: 'r', id, msg, stream, syncToFs, lock? }  execProtocolRaw(Stream); under `lock` if given,
 *                                            else under a query lock of its own
 *   { t: 'pt', id, msg, n, expect }          a pipelined transaction (ADR 0028): begin, run the
 *                                            raw pipeline `msg` (`n` statements) under the query
 *                                            lock, commit iff `pipelineVerdict` holds, else roll
 *                                            back; answered with { raw, committed }
 *   { t: 'c', id }                           close PGlite (the main thread then ends the worker)
 * Everything PGlite itself serialises (its transaction lock, its query lock) stays PGlite's:
 * this file only routes each message to the transaction or lock it belongs to, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, protocol } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { pipelineVerdict } from './pipeline-verdict.mjs';
import { RawChunks } from './raw-chunks.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** Every field `normalised()` / the SQL error mapping or a caller may read from a PGlite error. */
const ERROR_FIELDS = [
  'name',
  'message',
  'stack',
  'length',
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
  'query',
  'params',
];

/** An error as a cloneable record (structured clone keeps only an Error's message and stack). */
function errorOut(e) {
  if (!(e instanceof Error)) return { thrown: String(e) };
  /** @type {Record<string, unknown>} */
  const o = { database: e instanceof protocol.messages.DatabaseError };
  for (const f of ERROR_FIELDS) {
    const v = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (e))[f];
    if (v !== undefined) o[f] = v;
  }
  return o;
}

function reply(id, v, transfer) {
  try {
    port.postMessage({ id, v }, transfer ?? []);
  } catch (e) {
    // A result that cannot be cloned (never for PGlite's rows): fail that call, not the worker.
    port.postMessage({ id, err: errorOut(e) });
  }
}

function fail(id, e) {
  const err = errorOut(e);
  try {
    port.postMessage({ id, err });
  } catch {
    delete err.params; // e.g. a parameter that clones one way but not back
    port.postMessage({ id, err });
  }
}

/** Answer call `id` with the outcome of `p`. */
function settle(id, p, transfer) {
  p.then(
    (v) => reply(id, v, transfer?.(v)),
    (e) => fail(id, e),
  );
}

function boot() {
  const dataDir = /** @type {{ dataDir?: string }} */ (workerData).dataDir;
  return PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), extensions: { vector } });
}

/** A transaction's statements, in arrival order, for the callback that runs them. */
class TxQueue {
  /** @type {any[]} */ items = [];
  /** @type {((m: any) => void) | undefined} */ waiting;
  push(m) {
    if (this.waiting !== undefined) {
      const w = this.waiting;
      this.waiting = undefined;
      w(m);
    } else this.items.push(m);
  }
  next() {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    return new Promise((r) => (this.waiting = r));
  }
}

const ROLLBACK = Symbol('rollback');

/** @type {PGlite} */
let db;
try {
  db = await boot();
} catch (e) {
  // Nothing else keeps this thread alive: after the answer it ends.
  port.postMessage({ t: 'ready', err: errorOut(e) });
  port.close();
}

/** @type {Map<number, TxQueue>} */
const txs = new Map();
/** @type {Map<number, { acquired: Promise<void>, tail: Promise<unknown>, release: () => void }>} */
const locks = new Map();

/**
 * Transaction `id`: answer `beginId` once PGlite's transaction has begun (the main thread runs
 * its callback only then, so everything the callback sends — statements, raw protocol calls
 * under `runExclusive` — happens inside it, as with an in-process PGlite), then run the queued
 * statements until the end message.
 */
function runTx(id, beginId, q) {
  /** @type {any} */
  let end;
  db.transaction(async (tx) => {
    reply(beginId, undefined);
    for (;;) {
      const m = await q.next();
      if (m.t === 'e') {
        end = m;
        if (m.commit) return;
        throw ROLLBACK;
      }
      // One statement at a time, each answered before the next is taken (PGlite's order).
      try {
        const v =
          m.t === 'q'
            ? await tx.query(m.sql, m.params, m.opts)
            : m.t === 'x'
              ? await tx.exec(m.sql, m.opts)
              : await tx.rollback();
        reply(m.id, v);
      } catch (e) {
        fail(m.id, e);
      }
    }
  }).then(
    () => {
      txs.delete(id);
      reply(end.id, undefined);
    },
    (e) => {
      txs.delete(id);
      if (end === undefined)
        fail(beginId, e); // BEGIN failed: the callback never ran
      else if (e === ROLLBACK) reply(end.id, undefined);
      else fail(end.id, e);
    },
  );
}

/** Raw protocol `msg` through PGlite, the response joined into one copy of its own. */
async function rawJoined(msg, stream, syncToFs) {
  if (!stream) {
    const out = await db.execProtocolRaw(msg, { syncToFs });
    return out.slice(); // may be a view into WebAssembly memory
  }
  const chunks = new RawChunks();
  await db.execProtocolRawStream(msg, { syncToFs, onRawData: chunks.add });
  return chunks.joined();
}

function rawCall(m) {
  const run = () => rawJoined(m.msg, m.stream, m.syncToFs);
  const lock = m.lock === undefined ? undefined : locks.get(m.lock);
  let p;
  if (lock === undefined) p = db.runExclusive(run);
  else {
    p = lock.tail.then(run);
    lock.tail = p.catch(() => undefined);
  }
  settle(m.id, p, (v) => [v.buffer]);
}

/** `./pipeline-tx.ts` `pipelineTransaction`, the same steps, here in one message. */
function pipelineTx(m) {
  const p = db.transaction(async (tx) => {
    // As `rawExchange` does on the main thread: under the query lock, no file-system sync (the
    // COMMIT syncs).
    const raw = await db.runExclusive(() => rawJoined(m.msg, true, false));
    const committed = pipelineVerdict(raw, m.n, m.expect);
    if (!committed) await tx.rollback();
    return { raw, committed };
  });
  settle(m.id, p, (v) => [v.raw.buffer]);
}

function onMessage(m) {
  switch (m.t) {
    case 'q':
    case 'x':
    case 'rb':
    case 'e':
      if (m.tx !== undefined) {
        const q = txs.get(m.tx);
        if (q === undefined) fail(m.id, new Error('Transaction is closed'));
        else q.push(m);
      } else if (m.t === 'q') settle(m.id, db.query(m.sql, m.params, m.opts));
      else settle(m.id, db.exec(m.sql, m.opts));
      return;
    case 'b': {
      const q = new TxQueue();
      txs.set(m.tx, q);
      runTx(m.tx, m.id, q);
      return;
    }
    case 'l': {
      let release = () => {};
      const acquired = new Promise((held) => {
        db.runExclusive(
          () =>
            new Promise((done) => {
              release = () => done(undefined);
              held(undefined);
            }),
        ).catch(() => undefined);
      });
      locks.set(m.lock, { acquired, tail: acquired, release: () => release() });
      return;
    }
    case 'u': {
      const lock = locks.get(m.lock);
      if (lock === undefined) return;
      locks.delete(m.lock);
      void lock.tail.then(() => lock.release());
      return;
    }
    case 'r':
      rawCall(m);
      return;
    case 'pt':
      pipelineTx(m);
      return;
    case 'c':
      settle(m.id, db.close());
      return;
  }
}

if (db !== undefined) {
  port.on('message', onMessage);
  port.postMessage({ t: 'ready' });
}
