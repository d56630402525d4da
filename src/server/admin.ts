/**
 * @module server/admin
 * The identity administration API under `/v1/admin` (issue 24): an operator's key creates
 * principals, issues, lists, rotates and revokes API keys and re-issues a lost one. Every call
 * is decided and audited by the memory layer (operators only: `AUTH_FORBIDDEN` otherwise); this
 * module only translates HTTP. Also here: which end user a platform key acts for, read from the
 * `X-Memwarden-User-Id` / `-Agent-Id` / `-Run-Id` headers (ADR 0058), and the routes' OpenAPI
 * entries.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { PrincipalKinds } from '../core/trust.js';
import type { MemoryApi } from '../memory/api.js';
import { ACT_FOR_HEADERS, actForHeaders, actingPrincipal } from '../memory/identity/principals.js';
import { defined, readId, readJson, readQuery, validate } from './request.js';
import type { AppEnv } from './routes.js';
import { EmptyQuerySchema } from './schemas.js';

export { ACT_FOR_HEADERS, actForHeaders, actingPrincipal };

const Scope = z.enum(['principal', 'platform']);
const KeyIdSchema = z.string().regex(/^[0-9a-f]{64}$/, 'malformed key id');
const Reason = z.string().min(1).max(512);

export const CreatePrincipalBodySchema = z.strictObject({
  kind: z.enum(PrincipalKinds),
  name: z.string().min(1).max(256),
  /** The first key's scope (default `principal`; `platform` acts for end users). */
  scope: Scope.optional(),
});

export const IssueKeyBodySchema = z.strictObject({
  scope: Scope.optional(),
  /** Revoke every other key of the principal first (re-issue a lost key). */
  revokeOthers: z.boolean().optional(),
  reason: Reason.optional(),
});

const RevokeBodySchema = z.strictObject({ reason: Reason.optional() });

export interface AdminRouteOptions {
  /** Called after a key was revoked or rotated: drop cached authentications at once. */
  readonly onKeysChanged?: () => void;
}

export function registerAdminRoutes(
  app: Hono<AppEnv>,
  memory: MemoryApi,
  opts: AdminRouteOptions = {},
): void {
  const changed = (): void => opts.onKeysChanged?.();
  const by = (c: Context<AppEnv>): string => c.get('principal');
  const keyId = (c: Context<AppEnv>): string =>
    validate(KeyIdSchema, c.req.param('keyId'), 'key id');

  app.post('/v1/admin/principals', async (c) => {
    const b = await readJson(c, CreatePrincipalBodySchema);
    return c.json(await memory.adminCreatePrincipal({ ...defined(b), by: by(c) }), 201);
  });

  app.get('/v1/admin/principals', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json({ principals: await memory.adminListPrincipals({ by: by(c) }) });
  });

  app.post('/v1/admin/principals/:id/keys', async (c) => {
    const principal = readId(c);
    const b = await readJson(c, IssueKeyBodySchema, true);
    const key = await memory.adminIssueKey({ ...defined(b), principal, by: by(c) });
    if (b.revokeOthers === true) changed();
    return c.json(key, 201);
  });

  app.get('/v1/admin/principals/:id/keys', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json({ keys: await memory.adminListKeys({ principal: readId(c), by: by(c) }) });
  });

  app.post('/v1/admin/keys/:keyId/rotate', async (c) => {
    const id = keyId(c);
    await readJson(c, z.strictObject({}), true);
    const r = await memory.adminRotateKey({ keyId: id, by: by(c) });
    changed();
    return c.json(r, 201);
  });

  app.post('/v1/admin/keys/:keyId/revoke', async (c) => {
    const id = keyId(c);
    const b = await readJson(c, RevokeBodySchema, true);
    const r = await memory.adminRevokeKey({ ...defined(b), keyId: id, by: by(c) });
    changed();
    return c.json(r);
  });
}

// ---- OpenAPI ---------------------------------------------------------------------------------

type Json = Record<string, unknown>;
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const str: Json = { type: 'string' };
const ok = (description: string, schema: Json): Json => ({
  description,
  content: { 'application/json': { schema } },
});
const err = (...codes: number[]): Record<string, Json> =>
  Object.fromEntries(codes.map((c) => [String(c), ok('coded error', ref('Error'))]));
const jsonBody = (s: z.ZodType, required = true): Json => {
  const { $schema: _drop, ...schema } = z.toJSONSchema(s, { io: 'input' }) as Json;
  return { required, content: { 'application/json': { schema } } };
};
const pathId = (name: string): Json => ({ name, in: 'path', required: true, schema: str });
const OPERATORS_ONLY = ' Operators only (403 AUTH_FORBIDDEN otherwise); audited.';

const ApiKeyInfo: Json = {
  type: 'object',
  properties: {
    keyId: { ...str, description: 'hex SHA-256 of the secret' },
    principal: str,
    scope: { enum: ['principal', 'platform'] },
    createdAt: { ...str, format: 'date-time' },
    revoked: { type: 'boolean' },
  },
  required: ['keyId', 'principal', 'scope', 'createdAt', 'revoked'],
};
const IssuedApiKey: Json = {
  ...ApiKeyInfo,
  properties: {
    ...(ApiKeyInfo['properties'] as Json),
    apiKey: { ...str, description: 'the secret, shown this once' },
  },
  required: [...(ApiKeyInfo['required'] as string[]), 'apiKey'],
};
const AdminPrincipal: Json = {
  type: 'object',
  properties: {
    id: str,
    kind: { enum: [...PrincipalKinds] },
    name: str,
    createdAt: { ...str, format: 'date-time' },
  },
  required: ['id', 'kind', 'name', 'createdAt'],
};

export const adminSchemas: Record<string, Json> = { ApiKeyInfo, IssuedApiKey, AdminPrincipal };

export const adminPaths: Record<string, Record<string, Json>> = {
  '/v1/admin/principals': {
    post: {
      operationId: 'adminCreatePrincipal',
      summary: `Register a principal (unique name) and issue its first API key.${OPERATORS_ONLY}`,
      requestBody: jsonBody(CreatePrincipalBodySchema),
      responses: {
        '201': ok('the principal and its key', {
          allOf: [
            ref('AdminPrincipal'),
            { type: 'object', properties: { kid: str, key: ref('IssuedApiKey') } },
          ],
        }),
        ...err(400, 409),
      },
    },
    get: {
      operationId: 'adminListPrincipals',
      summary: `Every principal.${OPERATORS_ONLY}`,
      responses: {
        '200': ok('the principals', {
          type: 'object',
          properties: { principals: { type: 'array', items: ref('AdminPrincipal') } },
        }),
        ...err(400),
      },
    },
  },
  '/v1/admin/principals/{id}/keys': {
    post: {
      operationId: 'adminIssueKey',
      summary: `Issue another key (scope principal or platform); revokeOthers re-issues a lost key.${OPERATORS_ONLY}`,
      parameters: [pathId('id')],
      requestBody: jsonBody(IssueKeyBodySchema, false),
      responses: { '201': ok('the new key', ref('IssuedApiKey')), ...err(400, 404) },
    },
    get: {
      operationId: 'adminListKeys',
      summary: `A principal's keys, never their secrets.${OPERATORS_ONLY}`,
      parameters: [pathId('id')],
      responses: {
        '200': ok('the keys', {
          type: 'object',
          properties: { keys: { type: 'array', items: ref('ApiKeyInfo') } },
        }),
        ...err(400, 404),
      },
    },
  },
  '/v1/admin/keys/{keyId}/rotate': {
    post: {
      operationId: 'adminRotateKey',
      summary: `A new key of the same principal and scope; the old one stops working.${OPERATORS_ONLY}`,
      parameters: [pathId('keyId')],
      responses: { '201': ok('the new key', ref('IssuedApiKey')), ...err(400, 404) },
    },
  },
  '/v1/admin/keys/{keyId}/revoke': {
    post: {
      operationId: 'adminRevokeKey',
      summary: `Revoke a key.${OPERATORS_ONLY}`,
      parameters: [pathId('keyId')],
      requestBody: jsonBody(RevokeBodySchema, false),
      responses: { '200': ok('the key, revoked', ref('ApiKeyInfo')), ...err(400, 404, 409) },
    },
  },
};
