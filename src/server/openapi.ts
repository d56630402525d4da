/**
 * @module server/openapi
 * The OpenAPI 3.1 document served at `/openapi.json`. Request bodies are generated from the
 * very zod schemas the routes enforce (JSON Schema 2020-12, which OpenAPI 3.1 uses as is);
 * responses are written out here from the `MemoryApi` types. A test checks that every route
 * the app registers appears here.
 */
import { z } from 'zod';
import { SourceTiers, TrustLabels, AuthorityLevels } from '../core/trust.js';
import { VerdictKinds } from '../core/gate/index.js';
import {
  ActionCheckBodySchema,
  AddBodySchema,
  PurgeBodySchema,
  ReasonBodySchema,
  SearchBodySchema,
  GraphSearchBodySchema,
  UpdateBodySchema,
  VoteBodySchema,
} from './schemas.js';
import { consolePath, inspectPaths, inspectSchemas } from './openapi-inspect.js';
import { adminPaths, adminSchemas } from './admin.js';

type Json = Record<string, unknown>;

/** A request schema as plain JSON Schema, without the top-level `$schema` marker. */
function bodySchema(s: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io: 'input',
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const str: Json = { type: 'string' };
const int: Json = { type: 'integer', minimum: 0 };
const b64: Json = { type: 'string', contentEncoding: 'base64' };
const arr = (items: Json): Json => ({ type: 'array', items });
const obj = (properties: Record<string, Json>, required: string[]): Json => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const schemas: Record<string, Json> = {
  Error: obj(
    { error: obj({ code: str, message: str, details: { type: 'object' } }, ['code', 'message']) },
    ['error'],
  ),
  MemoryRecord: obj(
    {
      id: { ...str, description: 'the memory id: stable across updates' },
      versionId: { ...str, description: 'the id of this signed version (the log entry)' },
      content: str,
      kind: str,
      tier: { enum: [...SourceTiers] },
      label: { enum: [...TrustLabels] },
      authority: { enum: [...AuthorityLevels] },
      ns: str,
      writer: str,
      kid: str,
      source: str,
      runId: str,
      agentId: str,
      metadata: { type: 'object', description: 'caller metadata, signed with the memory' },
      eventAt: { type: 'string', format: 'date-time' },
      eventAtNs: { type: 'string', pattern: '^[0-9]+$' },
      parents: arr(str),
      weights: arr({ type: 'number' }),
      createdAt: { type: 'string', format: 'date-time' },
      createdAtNs: { type: 'string', pattern: '^[0-9]+$' },
      expiresAt: { type: 'string', format: 'date-time' },
      supersedes: str,
      reviewedBy: str,
      leafIndex: int,
      leafData: {
        ...b64,
        description:
          'the exact leaf input (id ‖ signature); SHA-256(0x00 ‖ leafData) is the leaf hash',
      },
      bytes: { ...b64, description: 'the canonical signed CBOR record' },
    },
    [
      'id',
      'versionId',
      'content',
      'kind',
      'tier',
      'label',
      'authority',
      'ns',
      'writer',
      'kid',
      'parents',
      'weights',
      'createdAt',
      'createdAtNs',
      'leafIndex',
      'leafData',
      'bytes',
    ],
  ),
  StoredMemory: {
    description:
      'the memory (as MemoryRecord) plus what the add did: ADD, UPDATE (a new version of the same memory; previous is the version superseded) or NOOP (already remembered, nothing written)',
    type: 'object',
    required: ['id', 'versionId', 'content', 'event'],
    properties: {
      event: { enum: ['ADD', 'UPDATE', 'NOOP'] },
      previous: ref('MemoryRecord'),
      conflict: obj({ with: str, reason: { const: 'lower_tier' } }, ['with', 'reason']),
    },
  },
  ConversationResult: obj(
    {
      results: arr(
        obj(
          {
            event: { enum: ['ADD', 'UPDATE', 'NOOP'] },
            memory: ref('MemoryRecord'),
            message: int,
            previous: ref('MemoryRecord'),
            conflict: obj({ with: str, reason: { const: 'lower_tier' } }, ['with', 'reason']),
          },
          ['event', 'memory'],
        ),
      ),
      held: arr(obj({ reviewId: str, reasons: arr(str), message: int }, ['reviewId', 'reasons'])),
    },
    ['results', 'held'],
  ),
  PendingReview: obj({ status: { const: 'pending_review' }, reviewId: str, reasons: arr(str) }, [
    'status',
    'reviewId',
    'reasons',
  ]),
  SearchResult: obj(
    {
      results: arr(
        obj(
          {
            memory: ref('MemoryRecord'),
            score: { type: 'number' },
            untrusted: { type: 'boolean' },
          },
          ['memory', 'score', 'untrusted'],
        ),
      ),
      context: { type: 'string', description: 'hits rendered as sentinel-delimited segments' },
      seal: {
        type: 'string',
        pattern: '^[0-9a-f]{32}$',
        description: "the random seal of this context's sentinels",
      },
      dropped: arr(obj({ id: str, code: str }, ['id', 'code'])),
      smoothing: ref('SmoothingResult'),
    },
    ['results', 'context', 'seal', 'dropped'],
  ),
  SmoothingCertificate: obj(
    {
      t: int,
      m: int,
      k: int,
      runs: int,
      pClean: { type: 'number' },
      delta: { type: 'number', description: 'upper bound on P[majority verdict is malicious]' },
      exact: obj({ num: str, den: str }, ['num', 'den']),
      threshold: int,
    },
    ['t', 'm', 'k', 'runs', 'pClean', 'delta', 'exact', 'threshold'],
  ),
  SmoothingResult: {
    ...obj(
      {
        m: int,
        k: int,
        runs: int,
        t: int,
        target: { type: 'number' },
        poolSize: int,
        certificate: ref('SmoothingCertificate'),
        certified: { type: 'boolean' },
        contexts: arr(obj({ ids: arr(str), context: str, seal: str }, ['ids', 'context', 'seal'])),
      },
      ['m', 'k', 'runs', 't', 'poolSize', 'certified', 'contexts'],
    ),
    description:
      'present on a smoothed search: `results` is the pool, `context` is empty, the model reads each of `contexts` in its own call (SMSR Algorithm 1)',
  },
  GraphHit: obj(
    {
      node: { enum: ['entity', 'passage'] },
      name: str,
      entryId: str,
      content: str,
      score: { type: 'number' },
      tier: { enum: [...SourceTiers] },
      label: { enum: [...TrustLabels] },
      authority: { enum: [...AuthorityLevels] },
      untrusted: { type: 'boolean' },
    },
    ['node', 'name', 'entryId', 'content', 'score', 'tier', 'label', 'authority', 'untrusted'],
  ),
  GraphSearchResult: obj(
    {
      selector: { enum: ['ppr', 'community', 'rrf'] },
      seeds: arr(str),
      results: arr(ref('GraphHit')),
      context: str,
      seal: str,
      authSelect: obj(
        {
          mode: { enum: ['clean', 'certified', 'replayed', 'immune'] },
          diverged: { type: 'boolean' },
          authority: { enum: [...AuthorityLevels] },
          authenticated: obj({ results: arr(ref('GraphHit')), context: str, seal: str }, [
            'results',
            'context',
            'seal',
          ]),
        },
        ['mode', 'diverged', 'authority'],
      ),
      verdict: obj({ kind: str, reason: str, required: { enum: [...AuthorityLevels] } }, [
        'kind',
        'reason',
        'required',
      ]),
    },
    ['selector', 'seeds', 'results', 'context', 'seal', 'authSelect'],
  ),
  SmoothedVote: obj(
    {
      verdict: { enum: ['correct', 'malicious', 'neither'] },
      counts: obj({ correct: int, malicious: int, neither: int }, [
        'correct',
        'malicious',
        'neither',
      ]),
      index: { type: 'integer', minimum: -1 },
      safe: { type: 'boolean' },
      certificate: ref('SmoothingCertificate'),
      certified: { type: 'boolean' },
    },
    ['verdict', 'counts', 'index', 'safe', 'certified'],
  ),
  HistoryEvent: obj(
    {
      action: { enum: ['add', 'update', 'delete', 'conflict'] },
      id: str,
      memoryId: str,
      supersedes: str,
      previous: str,
      actor: str,
      at: str,
      reason: str,
      memory: ref('MemoryRecord'),
    },
    ['action', 'id', 'actor', 'at'],
  ),
  Checkpoint: obj(
    {
      origin: str,
      size: int,
      root: b64,
      note: { type: 'string', description: 'the signed checkpoint note (C2SP tlog-checkpoint)' },
    },
    ['origin', 'size', 'root', 'note'],
  ),
  InclusionProof: obj(
    {
      leafIndex: int,
      treeSize: int,
      leafHash: b64,
      hashes: arr(b64),
      checkpoint: ref('Checkpoint'),
    },
    ['leafIndex', 'treeSize', 'leafHash', 'hashes', 'checkpoint'],
  ),
  ConsistencyProof: obj({ from: int, to: int, hashes: arr(b64), checkpoint: ref('Checkpoint') }, [
    'from',
    'to',
    'hashes',
    'checkpoint',
  ]),
  ReviewItem: obj(
    {
      id: str,
      principal: str,
      content: str,
      tier: { enum: [...SourceTiers] },
      reasons: arr(str),
      status: { enum: ['pending', 'approved', 'rejected'] },
      createdAt: str,
      decidedBy: str,
      memoryId: str,
    },
    ['id', 'principal', 'content', 'tier', 'reasons', 'status', 'createdAt'],
  ),
  SourceRef: {
    type: 'object',
    properties: {
      kind: { enum: ['segment', 'parameter'] },
      entryId: str,
      label: { enum: [...TrustLabels] },
      authority: { enum: [...AuthorityLevels] },
      param: str,
      sourceClass: str,
      why: str,
    },
    required: ['kind'],
  },
  GateAudit: {
    type: 'object',
    description:
      'The audit record of the verdict (also written to the audit log as gate.<verdict>)',
    properties: {
      tool: str,
      verdict: { enum: [...VerdictKinds] },
      reason: str,
      sensitive: { type: 'boolean' },
      mode: str,
      weakestLabel: { enum: [...TrustLabels] },
      usedSources: arr(ref('SourceRef')),
      rejectedSources: arr(ref('SourceRef')),
      repairs: arr({ type: 'object' }),
      unauthorisedParams: arr(str),
      untracedParams: {
        ...arr(str),
        description:
          'governed parameters whose value traces to nothing (not the request, no segment)',
      },
    },
    required: [
      'tool',
      'verdict',
      'reason',
      'sensitive',
      'mode',
      'usedSources',
      'rejectedSources',
      'repairs',
      'unauthorisedParams',
    ],
  },
  ActionVerdict: obj(
    {
      verdict: { enum: [...VerdictKinds] },
      reason: str,
      repairedArguments: {
        type: 'object',
        description: 'repair_and_retry: the arguments to run with',
      },
      strippedSegmentIds: {
        ...arr(str),
        description: 'strip_and_retry: segments to remove before retrying',
      },
      audit: ref('GateAudit'),
    },
    ['verdict', 'reason', 'audit'],
  ),
  ActionCheckBody: bodySchema(ActionCheckBodySchema),
  AddBody: bodySchema(AddBodySchema),
  SearchBody: bodySchema(SearchBodySchema),
  VoteBody: bodySchema(VoteBodySchema),
  GraphSearchBody: bodySchema(GraphSearchBodySchema),
  UpdateBody: bodySchema(UpdateBodySchema),
  ReasonBody: bodySchema(ReasonBodySchema),
  PurgeBody: {
    ...bodySchema(PurgeBodySchema),
    description:
      'exactly one of source, contentHash; allPrincipals (operator only) purges across every principal, audited',
  },
  ...inspectSchemas,
  ...adminSchemas,
};

const json = (schema: Json): Json => ({ content: { 'application/json': { schema } } });
const ok = (description: string, schema: Json): Json => ({ description, ...json(schema) });
const errors = (...codes: number[]): Record<string, Json> =>
  Object.fromEntries(codes.map((c) => [String(c), ok('coded error', ref('Error'))]));
const idParam: Json = { name: 'id', in: 'path', required: true, schema: str };
const q = (name: string, schema: Json, required = false): Json => ({
  name,
  in: 'query',
  required,
  schema,
});
const body = (name: string, required = true): Json => ({ required, ...json(ref(name)) });

/** Operations on `/v1`; all need a bearer key and may answer 401, 403, 429 or 500. */
const v1: Record<string, Record<string, Json>> = {
  '/v1/memories': {
    post: {
      operationId: 'addMemory',
      summary: 'Add a memory (signed and logged), or hold it for review',
      requestBody: body('AddBody'),
      responses: {
        '201': ok('stored (ADD or UPDATE); with messages: the conversation result', {
          oneOf: [ref('StoredMemory'), ref('ConversationResult')],
        }),
        '200': ok('already remembered (NOOP), nothing written', {
          oneOf: [ref('StoredMemory'), ref('ConversationResult')],
        }),
        '202': ok('held for review', ref('PendingReview')),
        ...errors(400, 413, 415),
      },
    },
    get: {
      operationId: 'listMemories',
      summary: "The principal's memories",
      parameters: [
        q('limit', { type: 'integer', minimum: 0, maximum: 1000 }),
        q('offset', int),
        q('source', str),
        q('runId', str),
        q('agentId', str),
        q('filters', { type: 'string', description: 'Mem0-style filters as JSON text' }),
      ],
      responses: {
        '200': ok(
          'memories; `unverified` names the visible entries that failed verification (not returned in `memories`)',
          obj({ memories: arr(ref('MemoryRecord')), unverified: arr(ref('UnverifiedEntry')) }, [
            'memories',
            'unverified',
          ]),
        ),
        ...errors(400),
      },
    },
  },
  '/v1/memories/search': {
    post: {
      operationId: 'searchMemories',
      summary: 'Verified retrieval: ranked hits, rendered context, dropped candidates',
      requestBody: body('SearchBody'),
      responses: { '200': ok('results', ref('SearchResult')), ...errors(400, 413, 415) },
    },
  },
  '/v1/memories/search/vote': {
    post: {
      operationId: 'voteSmoothed',
      summary:
        "Certified outcome of a smoothed search: the caller's verdicts on each ablated context's answer, strict majority, certificate recomputed (SMSR)",
      requestBody: body('VoteBody'),
      responses: { '200': ok('the outcome', ref('SmoothedVote')), ...errors(400, 415) },
    },
  },
  '/v1/graph/search': {
    post: {
      operationId: 'graphSearch',
      summary:
        "PPR / community / RRF selection over the caller's graph, sealed and scored; with `action`, replayed on the authenticated subgraph (AuthSelect) and decided by the gate",
      requestBody: body('GraphSearchBody'),
      responses: { '200': ok('the selection', ref('GraphSearchResult')), ...errors(400, 413, 415) },
    },
  },
  '/v1/actions/check': {
    post: {
      operationId: 'checkAction',
      summary:
        'Sensitive-action gate (MemLineage §3.7): a proposed tool call and the sealed context → verdict; audited',
      requestBody: body('ActionCheckBody'),
      responses: { '200': ok('the verdict', ref('ActionVerdict')), ...errors(400, 413, 415) },
    },
  },
  '/v1/memories/purge': {
    post: {
      operationId: 'purgeMemories',
      summary: 'Delete every memory from a source or with a content hash (failure-mode recovery)',
      requestBody: body('PurgeBody'),
      responses: { '200': ok('count', obj({ purged: int }, ['purged'])), ...errors(400, 403, 415) },
    },
  },
  '/v1/memories/{id}': {
    get: {
      operationId: 'getMemory',
      parameters: [idParam],
      responses: { '200': ok('the memory', ref('MemoryRecord')), ...errors(400, 404) },
    },
    put: {
      operationId: 'updateMemory',
      summary: 'A new signed version that supersedes the old one',
      parameters: [idParam],
      requestBody: body('UpdateBody'),
      responses: {
        '200': ok('the new version', ref('MemoryRecord')),
        ...errors(400, 404, 409, 413, 415),
      },
    },
    delete: {
      operationId: 'deleteMemory',
      summary: 'Signed tombstone; the leaf stays provable',
      parameters: [idParam, q('reason', str)],
      requestBody: body('ReasonBody', false),
      responses: {
        '200': ok('deleted', obj({ id: str, deleted: { const: true } }, ['id', 'deleted'])),
        ...errors(400, 404, 415),
      },
    },
  },
  '/v1/memories/{id}/history': {
    get: {
      operationId: 'memoryHistory',
      parameters: [idParam],
      responses: {
        '200': ok('versions', obj({ history: arr(ref('HistoryEvent')) }, ['history'])),
        ...errors(400, 404),
      },
    },
  },
  '/v1/memories/{id}/proof': {
    get: {
      operationId: 'memoryProof',
      summary: 'RFC 6962 inclusion proof and the signed checkpoint it verifies against',
      parameters: [idParam],
      responses: { '200': ok('proof', ref('InclusionProof')), ...errors(400, 404) },
    },
  },
  '/v1/log/checkpoint': {
    get: {
      operationId: 'logCheckpoint',
      responses: { '200': ok('checkpoint', ref('Checkpoint')) },
    },
  },
  '/v1/log/consistency': {
    get: {
      operationId: 'logConsistency',
      summary: 'RFC 6962 consistency proof between two tree sizes',
      parameters: [q('from', int, true), q('to', int, true)],
      responses: { '200': ok('proof', ref('ConsistencyProof')), ...errors(400) },
    },
  },
  '/v1/reviews': {
    get: {
      operationId: 'listReviews',
      parameters: [q('status', { enum: ['pending', 'approved', 'rejected'] })],
      responses: {
        '200': ok('reviews', obj({ reviews: arr(ref('ReviewItem')) }, ['reviews'])),
        ...errors(400),
      },
    },
  },
  '/v1/reviews/{id}/approve': {
    post: {
      operationId: 'approveReview',
      parameters: [idParam],
      requestBody: body('ReasonBody', false),
      responses: { '200': ok('decided', ref('ReviewItem')), ...errors(400, 404, 409) },
    },
  },
  '/v1/reviews/{id}/reject': {
    post: {
      operationId: 'rejectReview',
      parameters: [idParam],
      requestBody: body('ReasonBody', false),
      responses: { '200': ok('decided', ref('ReviewItem')), ...errors(400, 404, 409) },
    },
  },
};

/** The document, built fresh (callers may serialise it once). */
export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const [path, ops] of Object.entries({ ...v1, ...inspectPaths, ...adminPaths })) {
    paths[path] = Object.fromEntries(
      Object.entries(ops).map(([method, op]) => [
        method,
        {
          ...op,
          security: [{ bearer: [] }],
          responses: { ...errors(401, 403, 429, 500), ...(op['responses'] as Json) },
        },
      ]),
    );
  }
  paths['/healthz'] = {
    get: {
      operationId: 'health',
      security: [],
      responses: {
        '200': ok(
          'alive',
          obj(
            {
              status: { const: 'ok' },
              // `memwarden serve`: the storage backend, which vector path SQL searches take and
              // why, and the in-process read model (on a shared server: its log follower).
              storage: { type: 'object' },
            },
            ['status'],
          ),
        ),
      },
    },
  };
  paths['/metrics'] = {
    get: {
      operationId: 'metrics',
      security: [],
      responses: {
        '200': {
          description: 'Prometheus text exposition',
          content: { 'text/plain': { schema: str } },
        },
      },
    },
  };
  paths['/console'] = consolePath;
  paths['/openapi.json'] = {
    get: {
      operationId: 'openapi',
      security: [],
      responses: { '200': ok('this document', { type: 'object' }) },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'memwarden',
      version: '0.1.0',
      description:
        'A defended long-term memory layer for LLM agents. Errors are `{ error: { code, message } }`; branch on `code`. A platform key (`mwp_…`) may act for an end user on any `/v1` route by naming exactly one of the headers `X-Memwarden-User-Id`, `X-Memwarden-Agent-Id`, `X-Memwarden-Run-Id`: that user is its own principal, provisioned on first use (any other key naming one is 403 AUTH_FORBIDDEN).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas },
    paths,
  };
}
