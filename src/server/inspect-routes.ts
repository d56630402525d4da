/**
 * @module server/inspect-routes
 * Read routes for review and audit (what the console shows), all under `/v1`, so all
 * authenticated, and all scoped to the authenticated principal by the memory layer:
 * who am I, the investigation listing, an entry's lineage, the gate's recorded decisions, the
 * log's verifier key and the evaluation reports.
 */
import type { Hono } from 'hono';
import type { MemoryApi } from '../memory/api.js';
import type { ReportLibrary } from './reports.js';
import { defined, readId, readQuery, validate } from './request.js';
import type { AppEnv } from './routes.js';
import {
  EmptyQuerySchema,
  GateDecisionsQuerySchema,
  InvestigateQuerySchema,
  ReportNameSchema,
} from './schemas.js';

export function registerInspectRoutes(
  app: Hono<AppEnv>,
  memory: MemoryApi,
  reports: ReportLibrary,
): void {
  app.get('/v1/me', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json(await memory.whoami(c.get('principal')));
  });

  // Entries newest first in every state, filtered, keyset-paged, each re-verified: across
  // principals for an operator (audited by the memory layer), the caller's own scope for anyone
  // else (another `owner` is 403 AUTH_FORBIDDEN).
  app.get('/v1/investigate', async (c) => {
    const q = readQuery(c, InvestigateQuerySchema);
    const { tier, kind, label, status, q: query, ...rest } = q;
    return c.json(
      await memory.investigate({
        ...defined(rest),
        ...(tier === undefined ? {} : { tiers: tier }),
        ...(kind === undefined ? {} : { kinds: kind }),
        ...(label === undefined ? {} : { labels: label }),
        ...(status === undefined ? {} : { statuses: status }),
        ...(query === undefined ? {} : { query }),
        principal: c.get('principal'),
      }),
    );
  });

  // One entry, any principal's for an operator (audited): the console's "open the entry" after
  // an approval, whose entry lives in the user's scope.
  app.get('/v1/investigate/:id', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json(await memory.investigateEntry(readId(c), { principal: c.get('principal') }));
  });

  app.get('/v1/memories/:id/lineage', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json(await memory.ancestors(readId(c), { principal: c.get('principal') }));
  });

  app.get('/v1/gate/decisions', async (c) => {
    const q = readQuery(c, GateDecisionsQuerySchema);
    const decisions = await memory.gateDecisions({ ...defined(q), principal: c.get('principal') });
    return c.json({ decisions });
  });

  app.get('/v1/log/vkey', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json({ vkey: await memory.verifierKey() });
  });

  app.get('/v1/reports', async (c) => {
    readQuery(c, EmptyQuerySchema);
    return c.json({ reports: await reports.list() });
  });

  app.post('/v1/reports/:name/ticket', async (c) => {
    const name = validate(ReportNameSchema, c.req.param('name'), 'report name');
    const t = await reports.ticket(name);
    return c.json({ url: `/console/report/${t.ticket}`, expiresAt: t.expiresAt });
  });
}
