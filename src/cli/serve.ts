/**
 * @module cli/serve
 * `memwarden serve`: the HTTP API, OpenAPI document, Prometheus metrics and the review console
 * (`/console/`, with the evaluation reports under `--reports`) on the embedded store (or a
 * PostgreSQL server), until SIGINT / SIGTERM.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EmbeddingCache } from '../adapters/embeddings/cache.js';
import { MemwardenError } from '../core/errors.js';
import type { Memory } from '../open.js';
import { LocalMiniLmEmbedder } from '../adapters/embeddings/local-minilm.js';
import { McpBackend, mcpHttpHandler } from '../mcp/index.js';
import { createApp } from '../server/app.js';
import { createCachedAuthenticator } from '../server/auth.js';
import { createLogger } from '../server/logger.js';
import { Metrics } from '../server/metrics.js';
import { startServer } from '../server/serve.js';
import { type StoreOptions, openMemory } from './context.js';
import { witnessHook } from './witness.js';

/**
 * The local model, when it is the one in use (MEMWARDEN_EMBEDDER unset or `local`); undefined
 * otherwise (`deterministic` in tests), and `Memory.open` picks that one as usual.
 */
function localModel(): LocalMiniLmEmbedder | undefined {
  const choice = process.env.MEMWARDEN_EMBEDDER;
  return choice === undefined || choice === '' || choice === 'local'
    ? new LocalMiniLmEmbedder()
    : undefined;
}

/** Where the bootstrap operator key is written (0600) in the data folder. */
export const OPERATOR_KEY_FILE = 'operator-key';

/**
 * The first operator (issue 24): on a store without one, `MEMWARDEN_OPERATOR_KEY` becomes its
 * key, or a new key is written to `<data>/operator-key` (mode 0600, never overwritten) and
 * printed this once. Nothing goes through the logger; a later start creates and prints nothing.
 * Returns the line to print, or undefined.
 */
export async function bootstrapOperator(memory: Memory, data: string): Promise<string | undefined> {
  const given = process.env.MEMWARDEN_OPERATOR_KEY;
  const boot = await memory.bootstrapOperator(
    given === undefined || given === '' ? undefined : given,
  );
  if (boot === undefined) return undefined;
  if (given !== undefined && given !== '')
    return `memwarden: operator ${boot.id} created with the key in MEMWARDEN_OPERATOR_KEY\n`;
  mkdirSync(data, { recursive: true });
  const file = resolve(join(data, OPERATOR_KEY_FILE));
  try {
    writeFileSync(file, `${boot.apiKey}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // An older file is never overwritten: the key is then shown only here.
    if ((e as { code?: string }).code !== 'EEXIST') throw e;
    return (
      `memwarden: operator ${boot.id} created; its API key (shown once, ${file} already exists):\n` +
      `${boot.apiKey}\n`
    );
  }
  return (
    `memwarden: operator ${boot.id} created; its API key (shown once, also in ${file}, mode 0600):\n` +
    `${boot.apiKey}\n`
  );
}

export async function serve(
  o: StoreOptions & {
    port: number;
    host: string;
    witness?: readonly string[];
    acceptClientEmbeddings?: boolean;
    reports?: string;
  },
): Promise<void> {
  const metrics = new Metrics();
  const logger = createLogger();
  // The embedded store's PGlite runs in its own thread unless --no-pglite-worker (ADR 0028).
  // (`--postgres` comes from MEMWARDEN_DATABASE_URL too; empty means unset, as in Memory.open.)
  const embedded = o.postgres === undefined || o.postgres === '';
  const pgliteWorker = embedded && o.pgliteWorker !== false;
  // The model is loaded before serve says it listens (issue 24: the first request paid ~2 s
  // for it), while the store opens (PGlite works on its own thread meanwhile).
  const model = localModel();
  const opening = openMemory(
    // The same embedder Memory.open builds for 'local', handed in so it can be loaded now.
    { ...o, pgliteWorker, ...(model === undefined ? {} : { embedder: new EmbeddingCache(model) }) },
    metrics,
    (e) => {
      // The database thread died: every request would fail from now on. Exit for a supervisor
      // to restart on the intact data folder (acknowledged writes are committed there).
      logger.fatal({ code: e.code, details: e.details, err: e.message }, 'storage lost: exiting');
      process.exit(70);
    },
  );
  opening.catch(() => undefined); // awaited below; not unhandled while the model loads
  try {
    await model?.warm();
  } catch (e) {
    // No model, no service: say so now rather than on every request.
    await opening.then((m) => m.close()).catch(() => undefined);
    throw e;
  }
  const memory = await opening;
  let bootLine: string | undefined;
  try {
    bootLine = await bootstrapOperator(memory, o.data);
  } catch (e) {
    await memory.close().catch(() => undefined);
    throw e instanceof MemwardenError
      ? e
      : new MemwardenError('KEY_SOURCE_FAILED', 'could not write the operator key', { cause: e });
  }
  const modelLoadMs = model === undefined ? undefined : Math.round(model.stats().loadMs);
  // Which vector path runs, and why, in one line an operator reads (also in GET /healthz).
  const storage = memory.describeStorage();
  logger.info(
    {
      backend: storage.backend,
      vectorPath: storage.vector.sql,
      reason: storage.vector.reason,
      vector: storage.vector,
      readModel: storage.readModel.on
        ? storage.readModel.follower === undefined
          ? 'on'
          : `on, following the log (${storage.readModel.follower.synced ? 'synced' : 'not yet synced'})`
        : 'off',
    },
    `vector search: ${storage.readModel.on ? 'in-process read model; ' : ''}SQL path: ${storage.vector.summary}`,
  );
  const cosign = witnessHook(o.witness ?? [], memory, (witness, e) =>
    logger.warn({ witness, code: e.code, details: e.details }, 'witness failed'),
  );
  const app = createApp({
    memory,
    // Successful key lookups are reused for 5 s (a revoked key stops working within that).
    auth: createCachedAuthenticator({ authenticate: (t) => memory.authenticate(t) }),
    metrics,
    logger,
    clientEmbeddings: o.acceptClientEmbeddings === true,
    ...(cosign === undefined ? {} : { cosignCheckpoint: cosign }),
    ...(o.reports === undefined ? {} : { console: { reportsDir: o.reports } }),
    health: () => ({ storage: memory.describeStorage() }),
  });
  // MCP (Streamable HTTP) on the same port at /mcp, with the same keys: one process, one store.
  const mcp = mcpHttpHandler(await McpBackend.open(memory), '/mcp');
  const server = await startServer({
    app,
    port: o.port,
    host: o.host,
    mount: { path: '/mcp', handler: (req, res) => void mcp(req, res) },
  });
  logger.info(
    {
      url: server.url,
      data: o.data,
      backend: embedded ? 'pglite' : 'postgres',
      ...(embedded ? { pgliteWorker } : {}),
      ...(modelLoadMs === undefined ? {} : { embeddingModelLoadMs: modelLoadMs }),
    },
    'memwarden serving',
  );
  if (bootLine !== undefined) process.stdout.write(bootLine);
  if (modelLoadMs !== undefined)
    process.stdout.write(`memwarden: embedding model loaded in ${modelLoadMs} ms\n`);
  process.stdout.write(
    `memwarden listening on ${server.url} (console: ${server.url}/console/, MCP: ${server.url}/mcp)\n`,
  );
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await server.close().catch(() => undefined);
    await memory.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
