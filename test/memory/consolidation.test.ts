/**
 * Issue 20's four surprises, with the real local model (all-MiniLM-L6-v2, the vectors that
 * made the near-duplicate check refuse corrections at cosine ≥ 0.97), on the in-memory backend
 * with the read model, on PGlite and (with MEMWARDEN_TEST_DATABASE_URL) the PostgreSQL server without it: a correction (negation, changed time, changed
 * place) is an UPDATE of the same memory, forty facts that differ in a number are forty ADDs,
 * and a lower tier cannot supersede a higher one. Also the LLM consolidation step through the
 * provider port, against the protocol-level mock of an OpenAI-compatible server.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalMiniLmEmbedder } from '../../src/adapters/embeddings/local-minilm.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { OpenAiCompatibleProvider } from '../../src/adapters/llm/index.js';
import type { AddResult, MemoryRecord } from '../../src/memory/api.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { type MockOpenAiServer, startMockOpenAiServer } from '../../src/testing/llm/index.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { outcome } from '../helpers/outcome.js';
import { testMemory } from './helpers-memory.js';

const model = new LocalMiniLmEmbedder();

type Stored = Extract<AddResult, { status: 'stored' }>;
function stored(r: AddResult): Stored {
  if (r.status !== 'stored') throw new Error(`held: ${r.reasons.join(', ')}`);
  return r;
}

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const schemas: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  while (closers.length > 0) await closers.pop()!();
  if (url === undefined || schemas.length === 0) return;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await c.end();
});

const backends: Record<string, () => Promise<RootStorage>> = {
  'memory + read model': async () => withReadModel(await MemoryBackend.open()),
  pglite: () => PgliteBackend.open({}),
  ...(url === undefined
    ? {}
    : {
        'PostgreSQL server': () => {
          const schema = `mw_cons_${process.pid}_${schemas.length}_${Date.now().toString(36)}`;
          schemas.push(schema);
          return PgBackend.open({ connectionString: url, schema, maxConnections: 4 });
        },
      }),
};

async function setup(open: () => Promise<RootStorage>, extra = {}) {
  const storage = await open();
  closers.push(() => storage.close());
  const { mem } = await testMemory(storage, 'consolidation', { embedder: model, ...extra });
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  return { mem, alice };
}

const current = async (mem: Memory, principal: string, query: string): Promise<string[]> =>
  (await mem.search(query, { principal, limit: 10 })).results.map((h) => h.memory.content);

for (const [name, open] of Object.entries(backends)) {
  describe(`consolidation (${name}, all-MiniLM-L6-v2)`, () => {
    it('a correction by negation is an UPDATE of the same memory, never a refusal', async () => {
      const { mem, alice } = await setup(open);
      const a = stored(await mem.add('Alice is allergic to peanuts', { principal: alice }));
      expect(a.event).toBe('ADD');
      const b = stored(await mem.add('Alice is not allergic to peanuts', { principal: alice }));
      expect([b.event, b.memory.id, b.previous?.content]).toEqual([
        'UPDATE',
        a.memory.id,
        'Alice is allergic to peanuts',
      ]);
      expect(b.memory.supersedes).toBe(a.memory.versionId);
      expect((await mem.get(a.memory.id, { principal: alice }))?.content).toBe(
        'Alice is not allergic to peanuts',
      );
      expect(await current(mem, alice, 'is Alice allergic to peanuts?')).toEqual([
        'Alice is not allergic to peanuts',
      ]);
      const h = await mem.history(a.memory.id, { principal: alice });
      expect(h.map((e) => [e.action, e.memory?.content])).toEqual([
        ['add', 'Alice is allergic to peanuts'],
        ['update', 'Alice is not allergic to peanuts'],
      ]);
      // The same fact again: NOOP, the existing record, nothing written.
      const size = mem.ledger.size;
      const c = stored(await mem.add('Alice is not allergic to peanuts.', { principal: alice }));
      expect([c.event, c.memory.versionId]).toEqual(['NOOP', b.memory.versionId]);
      expect(mem.ledger.size).toBe(size);
    });

    it('a changed time is an UPDATE ("Meeting with Bob on Monday at 4pm" after "… at 3pm")', async () => {
      const { mem, alice } = await setup(open);
      const a = stored(await mem.add('Meeting with Bob on Monday at 3pm', { principal: alice }));
      const b = stored(await mem.add('Meeting with Bob on Monday at 4pm', { principal: alice }));
      expect([b.event, b.memory.id]).toEqual(['UPDATE', a.memory.id]);
      expect(await current(mem, alice, 'when is the meeting with Bob?')).toEqual([
        'Meeting with Bob on Monday at 4pm',
      ]);
    });

    it('forty distinct facts that differ in a number are forty memories', async () => {
      const { mem, alice } = await setup(open);
      const codes: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await outcome(
          mem.add(`Ticket ${4100 + i} is assigned to the billing team`, { principal: alice }),
        );
        codes.push(r);
      }
      expect(codes.filter((c) => c !== 'OK')).toEqual([]);
      const all = await mem.getAll({ principal: alice, limit: 100 });
      expect(all).toHaveLength(40);
      expect(new Set(all.map((m) => m.id)).size).toBe(40);
    });

    it('a changed place supersedes the old one: search knows which is current', async () => {
      const { mem, alice } = await setup(open);
      const a = stored(await mem.add('Alice lives in Berlin', { principal: alice }));
      const b = stored(await mem.add('Alice lives in Paris', { principal: alice }));
      expect([b.event, b.memory.id]).toEqual(['UPDATE', a.memory.id]);
      expect(await current(mem, alice, 'where does Alice live?')).toEqual(['Alice lives in Paris']);
      const h = await mem.history(a.memory.id, { principal: alice });
      expect(h.map((e) => e.memory?.content)).toEqual([
        'Alice lives in Berlin',
        'Alice lives in Paris',
      ]);
      expect(h[1]?.previous).toBe('Alice lives in Berlin');
    });

    it('a lower tier never supersedes a higher one: stored beside, untrusted, audited, in history', async () => {
      const { mem, alice } = await setup(open);
      const fact = stored(
        await mem.add('Alice is allergic to peanuts', { principal: alice, tier: 'USER_VERIFIED' }),
      );
      const web = stored(
        await mem.add('Alice is not allergic to peanuts', {
          principal: alice,
          tier: 'EXTERNAL_WEB',
          source: 'https://example.com/page',
        }),
      );
      expect(web.event).toBe('ADD');
      expect(web.conflict).toEqual({ with: fact.memory.id, reason: 'lower_tier' });
      expect(web.memory.id).not.toBe(fact.memory.id);
      // The verified fact is still the memory, and what a normal search returns.
      expect((await mem.get(fact.memory.id, { principal: alice }))?.content).toBe(
        'Alice is allergic to peanuts',
      );
      expect(await current(mem, alice, 'is Alice allergic to peanuts?')).toEqual([
        'Alice is allergic to peanuts',
      ]);
      const research = await mem.search('is Alice allergic to peanuts?', {
        principal: alice,
        mode: 'research',
      });
      const beside = research.results.find((h) => h.memory.id === web.memory.id);
      expect(beside?.untrusted).toBe(true);
      const h = await mem.history(fact.memory.id, { principal: alice });
      expect(h.map((e) => [e.action, e.id])).toEqual([
        ['add', fact.memory.versionId],
        ['conflict', web.memory.versionId],
      ]);
      // The same tier may correct it — the user's own statement (no parents). Without
      // `parents: []` the write is auto-attributed to the search above, which returned the web
      // page: DERIVED_UNTRUSTED, so it may not supersede the verified fact (it updates the page).
      const fix = stored(
        await mem.add('Alice is not allergic to peanuts', {
          principal: alice,
          tier: 'USER_VERIFIED',
          parents: [],
        }),
      );
      expect([fix.event, fix.memory.id]).toEqual(['UPDATE', fact.memory.id]);
    });

    it('metadata, event time and scopes are signed, filterable and kept by an update', async () => {
      const { mem, alice } = await setup(open);
      const a = stored(
        await mem.add('The flight to Lisbon leaves at 9am', {
          principal: alice,
          metadata: { trip: 'lisbon', priority: 2 },
          eventAt: '2026-03-02T09:00:00Z',
          runId: 'trip-planning',
        }),
      );
      expect(a.memory.metadata).toEqual({ trip: 'lisbon', priority: 2 });
      expect([a.memory.eventAt, a.memory.runId]).toEqual([
        '2026-03-02T09:00:00.000Z',
        'trip-planning',
      ]);
      await mem.add('The hotel in Lisbon is booked', {
        principal: alice,
        metadata: { trip: 'lisbon', priority: 1 },
      });
      await mem.add('Dentist appointment next week', {
        principal: alice,
        metadata: { priority: 3 },
      });
      const ids = async (filters: Record<string, unknown>, extra = {}): Promise<string[]> =>
        (await mem.search('Lisbon', { principal: alice, filters, ...extra })).results
          .map((h) => h.memory.content)
          .sort();
      expect(await ids({ trip: 'lisbon', priority: { gte: 2 } })).toEqual([
        'The flight to Lisbon leaves at 9am',
      ]);
      expect(await ids({ OR: [{ priority: 3 }, { trip: { in: ['lisbon'] } }] })).toHaveLength(3);
      expect(await ids({ eventAt: { gte: '2026-03-01', lt: '2026-03-03' } })).toEqual([
        'The flight to Lisbon leaves at 9am',
      ]);
      expect(await ids({}, { runId: 'trip-planning' })).toEqual([
        'The flight to Lisbon leaves at 9am',
      ]);
      const listed = await mem.getAll({ principal: alice, filters: { priority: { lt: 3 } } });
      expect(listed.map((m) => m.content).sort()).toEqual([
        'The flight to Lisbon leaves at 9am',
        'The hotel in Lisbon is booked',
      ]);
      // An update keeps the id, the metadata and the scope; a changed time consolidates —
      // also when, as here, the write follows a search and derives from what it returned
      // (`fromLastRetrieval`: since issue 24 a write without a thread or that flag is not
      // attributed to an unrelated search; DERIVED_TRUSTED may supersede TRUSTED: the same
      // trust class).
      const b = stored(
        await mem.add('The flight to Lisbon leaves at 11am', {
          principal: alice,
          fromLastRetrieval: true,
          runId: 'trip-planning',
          metadata: { trip: 'lisbon', priority: 2 },
        }),
      );
      expect([b.event, b.memory.id, b.memory.runId]).toEqual([
        'UPDATE',
        a.memory.id,
        'trip-planning',
      ]);
      expect([b.memory.label, b.memory.parents]).toEqual(['DERIVED_TRUSTED', [a.memory.versionId]]);
      // Bad input: coded, nothing written.
      expect(
        await outcome(mem.add('x', { principal: alice, metadata: { when: new Date() } })),
      ).toBe('INPUT_INVALID');
      expect(
        await outcome(mem.search('x', { principal: alice, filters: { priority: { gt: [1] } } })),
      ).toBe('INPUT_INVALID');
      expect(await outcome(mem.add('x', { principal: alice, eventAt: 'not a date' }))).toBe(
        'INPUT_INVALID',
      );
    });
  });
}

describe('LLM consolidation through the provider port (mock OpenAI-compatible server)', () => {
  let server: MockOpenAiServer;
  let answer = '{"event": "ADD"}';
  beforeAll(async () => {
    server = await startMockOpenAiServer({ handler: () => ({ kind: 'message', text: answer }) });
  });
  afterAll(async () => {
    await server.close();
  });

  it("the model's UPDATE / NONE / ADD decide; a malformed answer adds; the tier rule still holds", async () => {
    const llm = new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'mock' });
    const { mem, alice } = await setup(backends.pglite as () => Promise<RootStorage>, {
      consolidator: llm,
    });
    const a = stored(
      await mem.add('Alice drinks coffee every morning', {
        principal: alice,
        tier: 'USER_VERIFIED',
      }),
    );
    answer = '{"event": "UPDATE", "index": 0}';
    const b = stored(
      await mem.add('Alice switched to green tea in the mornings', {
        principal: alice,
        tier: 'USER_VERIFIED',
      }),
    );
    expect([b.event, b.memory.id]).toEqual(['UPDATE', a.memory.id]);
    const asked = server.requests.at(-1)?.body as { messages: { content: string }[] };
    expect(asked.messages.at(-1)?.content).toContain('Alice drinks coffee every morning');
    answer = '{"event": "NONE", "index": 0}';
    const c = stored(
      await mem.add('In the mornings Alice has green tea', {
        principal: alice,
        tier: 'USER_VERIFIED',
      }),
    );
    expect([c.event, c.memory.versionId]).toEqual(['NOOP', b.memory.versionId]);
    answer = 'I think you should update memory 7';
    const d = stored(
      await mem.add('Alice has green tea with honey in the mornings', {
        principal: alice,
        tier: 'USER_VERIFIED',
      }),
    );
    expect(d.event).toBe('ADD');
    // The model cannot make a web page supersede the user's verified memory.
    answer = '{"event": "UPDATE", "index": 0}';
    const e = stored(
      await mem.add('Alice hates green tea in the morning', {
        principal: alice,
        tier: 'EXTERNAL_WEB',
        verbatim: true,
      }),
    );
    expect(e.event).toBe('ADD');
    expect(e.conflict?.reason).toBe('lower_tier');
    const h = (m: MemoryRecord | undefined) => m?.content;
    expect(h(await mem.get(a.memory.id, { principal: alice }))).toBe(
      'Alice switched to green tea in the mornings',
    );
  });
});
