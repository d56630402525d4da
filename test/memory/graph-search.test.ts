/**
 * Issue 19: graph search in the product with AuthSelect. "No HTTP route or MCP tool runs PPR,
 * community selection or AuthSelect" and "AuthSelect's 'authenticated subgraph' is every edge
 * written at authority ≥ A, and agents and users write at USER_OBSERVED = A": `Memory.graphSearch`
 * selects over the principal's graph and, for a sensitive action, replays the selection on the
 * authenticated subgraph under an explicit policy (writer kind AND lineage label), the gate
 * deciding on the divergence.
 *
 * The attacker is a compromised peer agent writing into the user's graph (its entries carry the
 * user's scope, the agent as writer): the graph entries are written as signed ledger entries
 * with the label the lineage layer gives them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseSegments } from '../../src/core/render/sentinel.js';
import type { SourceTier, TrustLabel } from '../../src/core/trust.js';
import { USERS_ONLY_GRAPH_AUTH_POLICY } from '../../src/memory/graph/search.js';
import type { Ledger } from '../../src/memory/log/ledger.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import {
  type GraphWrite,
  PAYEE_QUESTION,
  graphWriter,
  payeeAttack,
  payeeGraph,
} from '../helpers/graph-attack.js';
import { testMemory } from './helpers-memory.js';

let open: Memory | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

interface World {
  mem: Memory;
  ledger: Ledger;
  user: string;
  agent: string;
  tool: string;
  write: GraphWrite;
}

async function world(extra: Parameters<typeof testMemory>[2] = {}): Promise<World> {
  const { mem, ledger } = await testMemory(
    withReadModel(await MemoryBackend.open()),
    'graph-search',
    extra,
  );
  open = mem;
  const user = (await mem.createPrincipal('user', 'alice')).id;
  const agent = (await mem.createPrincipal('agent', 'peer-agent')).id;
  const tool = (await mem.createPrincipal('tool', 'web-clipper')).id;
  // The user's own, trusted structure: the landlord is paid to the good account.
  const write = graphWriter(ledger, user);
  await payeeGraph(write, user);
  return { mem, ledger, user, agent, tool, write };
}

/** The compromised peer's write (test/helpers/graph-attack.ts). */
const attack = (w: World, writer: string, tier: SourceTier, label?: TrustLabel) =>
  payeeAttack(w.write, writer, tier, label);

const ask = (w: World, extra: object = {}) =>
  w.mem.graphSearch(PAYEE_QUESTION, {
    principal: w.user,
    k: 3,
    action: 'send_money',
    ...extra,
  });

describe('Memory.graphSearch with AuthSelect (issue 19)', () => {
  it('clean graph: PPR selection sealed and scored, no divergence, the gate allows (no over-block)', async () => {
    const w = await world();
    const r = await ask(w);
    expect(r.seeds).toEqual(expect.arrayContaining(['Landlord', 'Rent']));
    expect(r.results.map((h) => h.name)).toContain('GoodIBAN');
    expect(r.authSelect.diverged).toBe(false);
    expect(r.authSelect.mode).toBe('clean');
    expect(r.verdict?.kind).toBe('allow');
    expect(r.results[0]!.score).toBe(1);
    for (const h of r.results) expect(h.score).toBeGreaterThan(0);
    expect(parseSegments(r.context, r.seal).map((s) => s.id)).toEqual(
      r.results.map((h) => h.entryId),
    );
  });

  it('agent principal, edges derived from tool content: not authenticated — divergence, the gate does not allow, the replay keeps the good account', async () => {
    const w = await world();
    await attack(w, w.agent, 'USER_OBSERVED', 'DERIVED_UNTRUSTED');
    const r = await ask(w);
    expect(r.results.map((h) => h.name)).toContain('EvilIBAN'); // the attack steers plain PPR
    expect(r.authSelect.diverged).toBe(true);
    expect(r.authSelect.authority).toBe('U');
    expect(r.verdict?.kind).not.toBe('allow');
    const replay = r.authSelect.authenticated!;
    expect(replay.results.map((h) => h.name)).not.toContain('EvilIBAN');
    expect(replay.results.map((h) => h.name)).toContain('GoodIBAN');
    expect(parseSegments(replay.context, replay.seal)).toHaveLength(replay.results.length);
    // The trusted Landlord segment never carries the peer's lower-authority relation text.
    const landlord = r.results.find((h) => h.name === 'Landlord');
    expect(landlord?.authority).toBe('A');
    expect(landlord?.content).not.toContain('EvilIBAN');
  });

  it('tool principal: never authenticated, whatever its label', async () => {
    const w = await world();
    await attack(w, w.tool, 'EXTERNAL_TOOL', 'TRUSTED');
    const r = await ask(w);
    expect(r.authSelect.diverged).toBe(true);
    expect(r.verdict?.kind).not.toBe('allow');
  });

  it('an agent edge with a trusted label is authenticated by default (documented), not under USERS_ONLY', async () => {
    const w = await world();
    await attack(w, w.agent, 'USER_OBSERVED', 'TRUSTED');
    const r = await ask(w);
    expect(r.authSelect.diverged).toBe(false);
    expect(r.verdict?.kind).toBe('allow');
    const s = await world({ graphAuthPolicy: USERS_ONLY_GRAPH_AUTH_POLICY });
    await attack(s, s.agent, 'USER_OBSERVED', 'TRUSTED');
    const r2 = await ask(s);
    expect(r2.authSelect.diverged).toBe(true);
    expect(r2.verdict?.kind).not.toBe('allow');
  });

  it('advisory use (no action) returns the selection and the divergence without a verdict', async () => {
    const w = await world();
    await attack(w, w.agent, 'USER_OBSERVED', 'DERIVED_UNTRUSTED');
    const r = await w.mem.graphSearch('Landlord account', { principal: w.user, k: 3 });
    expect(r.verdict).toBeUndefined();
    expect(r.authSelect.diverged).toBe(true);
  });

  it('community and RRF selectors; RRF reads no structure (immune)', async () => {
    const w = await world();
    await attack(w, w.agent, 'USER_OBSERVED', 'DERIVED_UNTRUSTED');
    const c = await ask(w, { selector: 'community' });
    expect(c.selector).toBe('community');
    expect(['clean', 'replayed']).toContain(c.authSelect.mode);
    expect(c.results.length).toBeGreaterThan(0);
    const f = await ask(w, { selector: 'rrf' });
    expect(f.authSelect.mode).toBe('immune');
    expect(f.authSelect.diverged).toBe(false);
    expect(f.results.length).toBeGreaterThan(0);
  });

  it('bad input is INPUT_INVALID; another principal never sees this graph', async () => {
    const w = await world();
    for (const o of [{ k: 0 }, { k: 51 }, { selector: 'pagerank' }]) {
      const e = await ask(w, o).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isMemwardenError(e) && e.code, JSON.stringify(o)).toBe('INPUT_INVALID');
    }
    const e = await w.mem
      .graphSearch('Which account is the Landlord paid via?', { principal: w.agent })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    expect(isMemwardenError(e) && e.code).toBe('INPUT_INVALID'); // no known entity in its own graph
  });
});
