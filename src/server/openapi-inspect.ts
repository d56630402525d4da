/**
 * @module server/openapi-inspect
 * OpenAPI entries for the review and audit reads (server/inspect-routes.ts) and the console
 * page, merged into the document by server/openapi.ts.
 */
import { PrincipalKinds, SourceTiers, TrustLabels } from '../core/trust.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const str: Json = { type: 'string' };
const int: Json = { type: 'integer', minimum: 0 };
const arr = (items: Json): Json => ({ type: 'array', items });
const obj = (properties: Record<string, Json>, required: string[]): Json => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const ok = (description: string, schema: Json): Json => ({
  description,
  content: { 'application/json': { schema } },
});
const err = (...codes: number[]): Record<string, Json> =>
  Object.fromEntries(codes.map((c) => [String(c), ok('coded error', ref('Error'))]));

const STATES = ['live', 'deleted', 'superseded', 'expired'];
const list = (what: string, values?: readonly string[]): Json => ({
  type: 'string',
  description: `comma-separated ${what}${values === undefined ? '' : ` (${values.join(', ')})`}`,
});
const qp = (name: string, schema: Json, description?: string): Json => ({
  name,
  in: 'query',
  required: false,
  schema,
  ...(description === undefined ? {} : { description }),
});

export const inspectSchemas: Record<string, Json> = {
  UnverifiedEntry: obj(
    {
      id: str,
      code: { ...str, description: 'the error code of the failed check' },
      stage: {
        ...str,
        description:
          'decode, mac, signature, inclusion — or columns: a stored column the listing filtered on disagrees with the signed record',
      },
    },
    ['id', 'code', 'stage'],
  ),
  InvestigationRow: obj(
    {
      id: str,
      leafIndex: int,
      status: { enum: STATES },
      verified: { type: 'boolean', description: 're-verified now; false: see failure' },
      memory: ref('MemoryRecord'),
      failure: ref('UnverifiedEntry'),
      stored: {
        ...obj(
          {
            owner: str,
            tier: { enum: [...SourceTiers] },
            kind: str,
            source: str,
            writer: str,
            createdAt: str,
            content: str,
          },
          ['owner', 'tier'],
        ),
        description: "a failing row's columns as stored, NOT verified (operators only)",
      },
      score: { type: 'number', description: 'semantic ranking only' },
    },
    ['id', 'leafIndex', 'status', 'verified'],
  ),
  InvestigatedEntry: obj(
    {
      row: ref('InvestigationRow'),
      proof: ref('InclusionProof'),
      lineage: ref('LineageGraph'),
      scope: { enum: ['all', 'own'] },
    },
    ['row', 'scope'],
  ),
  InvestigationPage: obj(
    {
      rows: arr(ref('InvestigationRow')),
      nextCursor: {
        ...str,
        description: 'pass as cursor for the next, older page; absent on the last',
      },
      scope: {
        enum: ['all', 'own'],
        description: "all: every principal's entries (operator); own: the caller's scope",
      },
    },
    ['rows', 'scope'],
  ),
  Principal: obj({ id: str, kind: { enum: [...PrincipalKinds] }, name: str }, [
    'id',
    'kind',
    'name',
  ]),
  LineageGraph: obj(
    {
      root: str,
      nodes: arr(
        obj(
          {
            id: str,
            depth: int,
            state: { enum: ['verified', 'unverified', 'missing'] },
            status: { enum: ['live', 'superseded', 'deleted', 'expired'] },
            code: { ...str, description: 'why an unverified node failed verification' },
            memory: ref('MemoryRecord'),
          },
          ['id', 'depth', 'state'],
        ),
      ),
      edges: arr(
        obj({ child: str, parent: str, weight: { type: 'number' } }, ['child', 'parent', 'weight']),
      ),
      truncated: { type: 'boolean' },
    },
    ['root', 'nodes', 'edges', 'truncated'],
  ),
  GateDecision: obj(
    {
      id: str,
      at: { type: 'string', format: 'date-time' },
      principal: str,
      tool: str,
      verdict: str,
      reason: str,
      sensitive: { type: 'boolean' },
      weakestLabel: str,
      audit: ref('GateAudit'),
    },
    ['id', 'at', 'principal', 'tool', 'verdict', 'reason', 'sensitive', 'audit'],
  ),
  Report: obj(
    { name: str, title: str, modifiedAt: { type: 'string', format: 'date-time' }, bytes: int },
    ['name', 'title', 'modifiedAt', 'bytes'],
  ),
};

/** Operations on `/v1` (bearer key; 401/403/429/500 are added by the document builder). */
export const inspectPaths: Record<string, Record<string, Json>> = {
  '/v1/me': {
    get: {
      operationId: 'whoami',
      summary: 'The principal this API key belongs to',
      responses: { '200': ok('the principal', ref('Principal')), ...err(400) },
    },
  },
  '/v1/investigate': {
    get: {
      operationId: 'investigate',
      summary:
        "Entries newest first in every state, filtered, keyset-paged, each re-verified (a failing one listed with its reason): across principals for an operator (audited as operator.investigate), the caller's own scope otherwise",
      parameters: [
        qp(
          'owner',
          str,
          "only this principal's entries; another principal's is 403 AUTH_FORBIDDEN unless the caller is an operator",
        ),
        qp('tier', list('tiers', SourceTiers)),
        qp('kind', list('kinds')),
        qp('source', str, 'exact source URI'),
        qp('label', list('lineage labels', TrustLabels), 'checked on the signed record'),
        qp('status', list('states', STATES), 'default: every state'),
        qp(
          'q',
          { type: 'string', maxLength: 512 },
          'text the content contains (ASCII letters ignore case); with semantic=true, the meaning to rank by',
        ),
        qp(
          'semantic',
          { enum: ['true', 'false'] },
          'rank live entries by similarity to q: one page, best first, no cursor',
        ),
        qp('from', { type: 'string', format: 'date-time' }, 'written at or after'),
        qp('to', { type: 'string', format: 'date-time' }, 'written before'),
        qp('cursor', str, 'nextCursor of the previous page'),
        qp('limit', { type: 'integer', minimum: 1, maximum: 200 }, 'rows per page (default 50)'),
      ],
      responses: { '200': ok('one page', ref('InvestigationPage')), ...err(400) },
    },
  },
  '/v1/investigate/{id}': {
    get: {
      operationId: 'investigateEntry',
      summary:
        "One entry: any principal's for an operator (audited as operator.investigate), the caller's scope otherwise; a verified one with its inclusion proof and lineage",
      parameters: [{ name: 'id', in: 'path', required: true, schema: str }],
      responses: { '200': ok('the entry', ref('InvestigatedEntry')), ...err(400, 404) },
    },
  },
  '/v1/memories/{id}/lineage': {
    get: {
      operationId: 'memoryLineage',
      summary: "The entry's ancestor DAG, every node re-verified (principal-scoped)",
      parameters: [{ name: 'id', in: 'path', required: true, schema: str }],
      responses: { '200': ok('the ancestors', ref('LineageGraph')), ...err(400, 404) },
    },
  },
  '/v1/gate/decisions': {
    get: {
      operationId: 'gateDecisions',
      summary: "Recorded gate verdicts, newest first: the caller's own; an operator's: everyone's",
      parameters: [
        {
          name: 'limit',
          in: 'query',
          required: false,
          schema: { type: 'integer', minimum: 0, maximum: 1000 },
        },
      ],
      responses: {
        '200': ok('decisions', obj({ decisions: arr(ref('GateDecision')) }, ['decisions'])),
        ...err(400),
      },
    },
  },
  '/v1/log/vkey': {
    get: {
      operationId: 'logVerifierKey',
      summary: "The log's checkpoint verifier key (C2SP signed-note vkey)",
      responses: { '200': ok('vkey', obj({ vkey: str }, ['vkey'])), ...err(400) },
    },
  },
  '/v1/reports': {
    get: {
      operationId: 'listReports',
      summary: 'The evaluation reports found under the reports directory',
      responses: {
        '200': ok('reports', obj({ reports: arr(ref('Report')) }, ['reports'])),
        ...err(400),
      },
    },
  },
  '/v1/reports/{name}/ticket': {
    post: {
      operationId: 'reportTicket',
      summary:
        'A single-use URL (valid one minute) that serves the report under a no-script policy',
      parameters: [{ name: 'name', in: 'path', required: true, schema: str }],
      responses: {
        '200': ok(
          'ticket',
          obj({ url: str, expiresAt: { type: 'string', format: 'date-time' } }, [
            'url',
            'expiresAt',
          ]),
        ),
        ...err(400, 404),
      },
    },
  },
};

/** The console page itself (public: it holds no data). */
export const consolePath: Json = {
  get: {
    operationId: 'console',
    security: [],
    summary: 'The review console (redirects to /console/; static files under it)',
    responses: { '301': { description: 'to /console/' } },
  },
};
