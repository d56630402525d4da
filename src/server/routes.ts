/**
 * @module server/routes
 * The `/v1` routes: thin translations from validated HTTP requests to `MemoryApi` calls. The
 * principal always comes from authentication, never from the request.
 */
import type { Hono } from 'hono';
import { MemwardenError } from '../core/errors.js';
import type {
  AddOptions,
  CheckpointView,
  MemoryApi,
  SearchHit,
  SearchOptions,
  SearchResult,
  SmoothingOptions,
} from '../memory/api.js';
import { memoryRecordJson } from '../memory/read/records.js';
import type { MetricsSink } from './metrics.js';
import { assertContentSize, defined, readId, readJson, readQuery } from './request.js';
import {
  ActionCheckBodySchema,
  AddBodySchema,
  ConsistencyQuerySchema,
  DeleteQuerySchema,
  EmptyQuerySchema,
  ListQuerySchema,
  PurgeBodySchema,
  ReasonBodySchema,
  ReviewsQuerySchema,
  MAX_CONTEXT_BYTES,
  SearchBodySchema,
  GraphSearchBodySchema,
  UpdateBodySchema,
  VoteBodySchema,
} from './schemas.js';
import { voteOn } from '../memory/read/smoothing.js';

/** Per-request values set by the middleware. */
export interface AppVariables {
  requestId: string;
  principal: string;
  /** The platform principal whose key acts for `principal` (ADR 0058), when one does. */
  platform: string;
  /** The error code of a failed request, for the request log line. */
  errorCode: string;
}

export type AppEnv = { Variables: AppVariables };

/** Default reason recorded on a DELETE that gives none. */
export const DEFAULT_DELETE_REASON = 'deleted through the HTTP API';

/** Turns a published checkpoint into the one served (e.g. with witness cosignatures). */
export type CheckpointHook = (cp: CheckpointView) => Promise<CheckpointView>;

export interface RouteOptions {
  /** Accept `embedding` (a precomputed vector) on add and search (ADR 0012); default false. */
  readonly clientEmbeddings?: boolean;
  /** Turns a published checkpoint into the one served (witness cosignatures). */
  readonly cosignCheckpoint?: CheckpointHook;
}

/**
 * The caller's vector as a Float32Array, or undefined when none was sent. Refused unless the
 * server accepts client embeddings: a vector steers ranking, so taking one is an operator's
 * choice, never a caller's.
 */
function clientVector(v: readonly number[] | undefined, accept: boolean): Float32Array | undefined {
  if (v === undefined) return undefined;
  if (!accept) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'this server does not accept client embeddings (serve --accept-client-embeddings)',
      { details: { field: 'embedding' } },
    );
  }
  // The constructor copies an array natively (`Float32Array.from` iterates it): the same floats.
  return new Float32Array(v);
}

/**
 * `JSON.stringify({ results, context, seal, dropped })` of a search result, exactly: each hit's
 * record comes from `memoryRecordJson` (the entry's cached JSON around its expiry — most of a
 * ~15 KB response is the same entries' text search after search). A hit that is not the plain
 * `{ memory, score, untrusted }` the search path builds is stringified whole.
 */
export function searchJson(r: SearchResult): string {
  let out = '{"results":[';
  for (let i = 0; i < r.results.length; i++) {
    if (i > 0) out += ',';
    out += hitJson(r.results[i] as SearchHit);
  }
  out += `],"context":${JSON.stringify(r.context)},"seal":${JSON.stringify(r.seal)},"dropped":${JSON.stringify(r.dropped)}`;
  return r.smoothing === undefined
    ? `${out}}`
    : `${out},"smoothing":${JSON.stringify(r.smoothing)}}`;
}

function hitJson(h: SearchHit): string {
  if (h === null || typeof h !== 'object' || Object.getPrototypeOf(h) !== Object.prototype)
    return JSON.stringify(h) ?? 'null';
  const keys = Object.keys(h);
  if (
    keys.length !== 3 ||
    keys[0] !== 'memory' ||
    keys[1] !== 'score' ||
    keys[2] !== 'untrusted' ||
    typeof h.score !== 'number' ||
    typeof h.untrusted !== 'boolean' ||
    h.memory === null ||
    typeof h.memory !== 'object'
  )
    return JSON.stringify(h);
  return `{"memory":${memoryRecordJson(h.memory)},"score":${JSON.stringify(h.score)},"untrusted":${h.untrusted ? 'true' : 'false'}}`;
}

/** Register every `/v1` route on `app`. */
export function registerRoutes(
  app: Hono<AppEnv>,
  memory: MemoryApi,
  metrics: MetricsSink,
  ropts: RouteOptions = {},
): void {
  const acceptVectors = ropts.clientEmbeddings === true;
  const cosignCheckpoint = ropts.cosignCheckpoint;
  app.post('/v1/memories', async (c) => {
    let body;
    let vector: Float32Array | undefined;
    try {
      body = await readJson(c, AddBodySchema);
      if ((body.content === undefined) === (body.messages === undefined))
        throw new MemwardenError('INPUT_INVALID', 'give exactly one of content, messages', {
          details: { field: 'content' },
        });
      if (body.content !== undefined) assertContentSize(body.content, 'content');
      for (const m of body.messages ?? []) assertContentSize(m.content, 'messages');
      if (body.messages !== undefined && body.embedding !== undefined)
        throw new MemwardenError('INPUT_INVALID', 'embedding goes with content, not messages', {
          details: { field: 'embedding' },
        });
      if (body.messages === undefined && body.infer !== undefined)
        throw new MemwardenError('INPUT_INVALID', 'infer goes with messages', {
          details: { field: 'infer' },
        });
      vector = clientVector(body.embedding, acceptVectors);
    } catch (e) {
      // Refused at the door: count it with the memory layer's own refusals.
      metrics.recordRejected(
        e instanceof MemwardenError && e.code === 'INPUT_TOO_LARGE'
          ? 'oversize'
          : 'invalid_request',
      );
      throw e;
    }
    const { content, messages, infer, embedding: _sent, ...rest } = body;
    if (messages !== undefined) {
      const r = await memory.add(
        messages.map((m) => defined(m)),
        {
          ...defined(rest),
          ...(infer === undefined ? {} : { infer }),
          principal: c.get('principal'),
        },
      );
      return c.json(
        { results: r.results, held: r.held },
        r.results.some((x) => x.event !== 'NOOP') ? 201 : 200,
      );
    }
    const opts: AddOptions = {
      ...defined(rest),
      ...(vector === undefined ? {} : { embedding: vector }),
      principal: c.get('principal'),
    };
    const r = await memory.add(content as string, opts);
    if (r.status === 'stored') {
      // The memory, what the add did (consolidation: NOOP wrote nothing, 200) and which
      // parents the write used and why (issue 24).
      return c.json(
        {
          ...r.memory,
          event: r.event,
          ...(r.previous === undefined ? {} : { previous: r.previous }),
          ...(r.conflict === undefined ? {} : { conflict: r.conflict }),
          ...(r.lineage === undefined ? {} : { lineage: r.lineage }),
        },
        r.event === 'NOOP' ? 200 : 201,
      );
    }
    return c.json(
      {
        status: r.status,
        reviewId: r.reviewId,
        reasons: r.reasons,
        ...(r.lineage === undefined ? {} : { lineage: r.lineage }),
      },
      202,
    );
  });

  app.post('/v1/memories/search', async (c) => {
    const { query, embedding, ...rest } = await readJson(c, SearchBodySchema);
    assertContentSize(query, 'query');
    const vector = clientVector(embedding, acceptVectors);
    const { filters, smoothing, ...flat } = rest;
    const opts: SearchOptions = {
      ...defined(flat),
      ...(smoothing === undefined ? {} : { smoothing: defined(smoothing) as SmoothingOptions }),
      ...(vector === undefined ? {} : { embedding: vector }),
      ...(filters === undefined ? {} : { filters }),
      principal: c.get('principal'),
    };
    const r = await memory.search(query, opts);
    // What c.json({ results, context, seal, dropped }) sends, byte for byte (searchJson).
    return c.body(searchJson(r), undefined, { 'Content-Type': 'application/json' });
  });

  // The certified outcome of a smoothed search (SMSR strict majority, issue 19): pure, but here
  // so an HTTP-only client gets the certificate from the server's own arithmetic.
  app.post('/v1/memories/search/vote', async (c) => {
    const { verdicts, ...params } = await readJson(c, VoteBodySchema);
    const v = voteOn(defined(params) as Parameters<typeof voteOn>[0], verdicts);
    const { ids: _none, ...rest } = v;
    return c.json(rest);
  });

  // Graph search with AuthSelect (issue 19): the principal's graph only.
  app.post('/v1/graph/search', async (c) => {
    const { query, ...rest } = await readJson(c, GraphSearchBodySchema);
    assertContentSize(query, 'query');
    return c.json(
      await memory.graphSearch(query, { ...defined(rest), principal: c.get('principal') }),
    );
  });

  // The sensitive-action gate (MemLineage §3.7): every verdict is audited by the memory layer.
  app.post('/v1/actions/check', async (c) => {
    const body = await readJson(c, ActionCheckBodySchema);
    assertContentSize(body.context, 'context', MAX_CONTEXT_BYTES);
    const v = await memory.checkAction({
      principal: c.get('principal'),
      call: body.call,
      context: body.context,
      seal: body.seal,
      ...(body.sources === undefined
        ? {}
        : {
            sources: Object.fromEntries(
              Object.entries(body.sources).map(([k, list]) => [k, list.map((s) => defined(s))]),
            ),
          }),
      ...(body.userRequest === undefined ? {} : { userRequest: body.userRequest }),
    });
    return c.json({
      verdict: v.kind,
      reason: v.reason,
      ...(v.repairedArguments === undefined ? {} : { repairedArguments: v.repairedArguments }),
      ...(v.strippedSegmentIds === undefined ? {} : { strippedSegmentIds: v.strippedSegmentIds }),
      audit: v.audit,
    });
  });

  app.post('/v1/memories/purge', async (c) => {
    const body = await readJson(c, PurgeBodySchema);
    const purged = await memory.purge({ ...defined(body), principal: c.get('principal') });
    return c.json({ purged });
  });

  app.get('/v1/memories', async (c) => {
    const { filters, ...q } = readQuery(c, ListQuerySchema);
    let parsed: unknown;
    if (filters !== undefined) {
      try {
        parsed = JSON.parse(filters);
      } catch {
        throw new MemwardenError('INPUT_INVALID', 'filters must be JSON', {
          details: { field: 'filters' },
        });
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new MemwardenError('INPUT_INVALID', 'filters must be a JSON object', {
          details: { field: 'filters' },
        });
    }
    // Entries that fail verification are named in `unverified` (id, code), not dropped silently.
    const r = await memory.getAllChecked({
      ...defined(q),
      ...(parsed === undefined ? {} : { filters: parsed as Record<string, unknown> }),
      principal: c.get('principal'),
    });
    return c.json({ memories: r.memories, unverified: r.unverified });
  });

  app.get('/v1/memories/:id', async (c) => {
    readQuery(c, EmptyQuerySchema);
    const id = readId(c);
    const m = await memory.get(id, { principal: c.get('principal') });
    // Another principal's entry is indistinguishable from a missing one (no existence oracle).
    if (m === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory');
    return c.json(m);
  });

  app.put('/v1/memories/:id', async (c) => {
    const id = readId(c);
    const body = await readJson(c, UpdateBodySchema);
    assertContentSize(body.content, 'content');
    try {
      const m = await memory.update(id, body.content, {
        principal: c.get('principal'),
        ...(body.reason === undefined ? {} : { reason: body.reason }),
        ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
        ...(body.eventAt === undefined ? {} : { eventAt: body.eventAt }),
      });
      return c.json(m);
    } catch (e) {
      // The new version was screened and held: accepted for review, like a held add.
      if (e instanceof MemwardenError && e.code === 'WRITE_HELD')
        return c.json({ status: 'pending_review', ...e.details }, 202);
      throw e;
    }
  });

  app.delete('/v1/memories/:id', async (c) => {
    const id = readId(c);
    const q = readQuery(c, DeleteQuerySchema);
    const b = await readJson(c, ReasonBodySchema, true);
    if (q.reason !== undefined && b.reason !== undefined) {
      throw new MemwardenError(
        'INPUT_INVALID',
        'give the reason in the query or the body, not both',
      );
    }
    const reason = q.reason ?? b.reason ?? DEFAULT_DELETE_REASON;
    await memory.delete(id, { principal: c.get('principal'), reason });
    return c.json({ id, deleted: true });
  });

  app.get('/v1/memories/:id/history', async (c) => {
    readQuery(c, EmptyQuerySchema);
    const history = await memory.history(readId(c), { principal: c.get('principal') });
    return c.json({ history });
  });

  app.get('/v1/memories/:id/proof', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json(await memory.proof(readId(c), { principal: c.get('principal') }));
  });

  app.get('/v1/log/checkpoint', async (c) => {
    readQuery(c, EmptyQuerySchema);
    const cp = await memory.checkpoint();
    return c.json(cosignCheckpoint === undefined ? cp : await cosignCheckpoint(cp));
  });

  app.get('/v1/log/consistency', async (c) => {
    const { from, to } = readQuery(c, ConsistencyQuerySchema);
    if (from > to) throw new MemwardenError('LOG_SIZE_INVALID', 'from must not exceed to');
    return c.json(await memory.consistency(from, to));
  });

  app.get('/v1/reviews', async (c) => {
    const q = readQuery(c, ReviewsQuerySchema);
    const reviews = await memory.listReviews({ ...defined(q), principal: c.get('principal') });
    return c.json({ reviews });
  });

  for (const decision of ['approve', 'reject'] as const) {
    app.post(`/v1/reviews/:id/${decision}`, async (c) => {
      const id = readId(c);
      const b = await readJson(c, ReasonBodySchema, true);
      const item = await memory.decideReview(id, decision, {
        reviewer: c.get('principal'),
        ...(b.reason === undefined ? {} : { reason: b.reason }),
      });
      return c.json(item);
    });
  }
}
