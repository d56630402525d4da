/**
 * @module server/openapi-inspect
 * OpenAPI entries for the review and audit reads (server/inspect-routes.ts) and the console
 * page, merged into the document by server/openapi.ts.
 */
import { PrincipalKinds } from '../core/trust.js';

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

export const inspectSchemas: Record<string, Json> = {
  Principal: obj({ id: str, kind: { enum: [...PrincipalKinds] }, name: str }, ['id', 'kind', 'name']),
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
      edges: arr(obj({ child: str, parent: str, weight: { type: 'number' } }, ['child', 'parent', 'weight'])),
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
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 1000 } },
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
      responses: { '200': ok('reports', obj({ reports: arr(ref('Report')) }, ['reports'])), ...err(400) },
    },
  },
  '/v1/reports/{name}/ticket': {
    post: {
      operationId: 'reportTicket',
      summary: 'A single-use URL (valid one minute) that serves the report under a no-script policy',
      parameters: [{ name: 'name', in: 'path', required: true, schema: str }],
      responses: {
        '200': ok(
          'ticket',
          obj({ url: str, expiresAt: { type: 'string', format: 'date-time' } }, ['url', 'expiresAt']),
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
