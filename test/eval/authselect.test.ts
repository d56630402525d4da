import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type AuthSelectEvalResult,
  DEFENCES,
  PAPER,
  TransferLedger,
  bAMemGuard,
  generateCorpus,
  registerEvalAuthselect,
  runAuthSelectEval,
  writeAuthSelectReport,
} from '../../src/eval/authselect/index.js';

let res: AuthSelectEvalResult;
const dir = mkdtempSync(join(tmpdir(), 'authselect-'));
// One attack seed per cell (the CLI default is 3): every attack is written through the product's
// write path by registered principals, which costs ~10 k signed writes per seed.
const OPTS = { attackSeeds: 1 } as const;
beforeAll(async () => {
  res = await runAuthSelectEval(OPTS);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('AuthSelect evaluation', () => {
  it('the corpus is deterministic and has known gold passages', () => {
    const a = generateCorpus(1);
    expect(generateCorpus(1)).toEqual(a);
    const keys = new Set(a.passages.map((p) => p.key));
    for (const q of a.questions) for (const g of q.goldPassages) expect(keys.has(g)).toBe(true);
    expect(new Set(a.questions.map((q) => q.kind))).toEqual(
      new Set(['bridge', 'composition', 'session']),
    );
  });

  it('reports harm, overblock and ifcBlindRows per defence, on a non-vacuous grid', () => {
    const s = res.summary;
    expect(s.corpus.cleanCorrect).toBeGreaterThan(10);
    for (const d of DEFENCES) {
      expect(s.defences[d].rows).toBeGreaterThan(100);
      // Issue 19: these were `typeof … === 'number'`, which cannot fail. The rates must be the
      // row counts they summarise, and IFC-blind rows a subset of the rows.
      const x = s.defences[d];
      expect(x.harm).toBeCloseTo(x.harmfulRows / x.rows, 3);
      expect(x.overblock).toBeGreaterThanOrEqual(0);
      expect(x.overblock).toBeLessThanOrEqual(1);
      expect(Number.isInteger(x.ifcBlindRows)).toBe(true);
      expect(x.ifcBlindRows).toBeLessThanOrEqual(x.rows);
    }
    expect(s.runtimeMs).toBeLessThan(180_000);
  });

  it('reproduces the paper’s picture: faithful IFC is blind to the oracle write, AuthSelect closes it', () => {
    const o = res.summary.arms.oracle!;
    expect(o.defences.none.harm).toBeGreaterThan(0);
    expect(o.defences.justification_ifc.harm).toBe(o.defences.none.harm);
    expect(o.defences.justification_ifc.ifcBlindRows).toBeGreaterThan(0);
    expect(o.defences.post_selection_rerank.harm).toBe(o.defences.none.harm);
    expect(o.defences.authselect.harm).toBe(0);
    expect(res.summary.defences.authselect.overblock).toBe(0);
    expect(res.summary.defences.context_ifc.overblock).toBeGreaterThan(0);
    // Inject-only: harm is visible (never IFC-blind), and justification IFC catches it.
    const inj = res.summary.arms.inject_only!;
    expect(inj.defences.none.ifcBlindRows).toBe(0);
    expect(inj.defences.justification_ifc.harm).toBe(0);
  });

  it('corpus counts are the corpus, not the attack grid (issue 19: 138 leftover attack nodes)', () => {
    const c = res.summary.corpus;
    // One node per passage and at most one per gazetteer entity: injected attack passages are
    // not corpus.
    expect(c.nodes).toBeLessThanOrEqual(c.passages + c.entities);
    expect(c.nodes).toBeGreaterThan(c.passages);
  });

  it('attacks are signed writes by real principals through the product write path (issue 19)', () => {
    // Before: the grid added its attack edges to the index with a hard-coded 'U'. Now each is an
    // entry a registered principal wrote through Memory.graph; what the selection saw of it —
    // the signed lineage label, the folded authority — is read back from the store.
    const by = res.summary.byAttacker;
    expect(Object.keys(by).sort()).toEqual(['agent', 'tool']);
    const agent = by['agent']!;
    const tool = by['tool']!;
    expect(agent.tier).toBe('USER_OBSERVED'); // the agent's tier authority is A …
    expect(agent.held).toBe(0); // the write path stored every attack (nothing to measure otherwise)
    const n = Object.values(agent.labels).reduce((a, b) => a + b, 0);
    expect(n).toBeGreaterThan(100);
    // … but what it writes derives from the web page it read: DERIVED_UNTRUSTED, folded to U.
    expect(agent.labels).toEqual({ DERIVED_UNTRUSTED: n });
    expect(agent.authorities).toEqual({ U: n });
    expect(tool.tier).toBe('EXTERNAL_TOOL');
    expect(tool.labels).toEqual({ EXTERNAL: n });
    expect(tool.authorities).toEqual({ U: n });
    expect(agent.writes).toBeGreaterThan(n); // attacks plus their deletions (the reset)
  });

  it('the compromised agent peer: harm 0 with AuthSelect, over-block 0 on the clean questions (issue 19, done-when)', () => {
    const a = res.summary.byAttacker['agent']!.defences;
    expect(a.none.rows).toBeGreaterThan(100);
    expect(a.none.harm).toBeGreaterThan(0); // the attack works without a defence …
    expect(a.justification_ifc.ifcBlindRows).toBeGreaterThan(0); // … invisibly to faithful IFC
    expect(a.authselect.harm).toBe(0);
    expect(a.authselect.harmfulRows).toBe(0);
    expect(a.authselect.overblock).toBe(0);
    expect(res.summary.defences.authselect.overblock).toBe(0);
    expect(res.summary.producedBy).toMatch(/^scripted attackers/);
  });

  it('reliance ρ (Table I) is computed, with the paper beside it (issue 19)', () => {
    const r = Object.fromEntries(res.summary.reliance.rows.map((x) => [x.selector, x]));
    // PPR's correct questions are exactly the grid's clean-correct ones (the same selection).
    expect(r['ppr']!.correct).toBe(res.summary.corpus.cleanCorrect);
    for (const x of res.summary.reliance.rows) {
      expect(x.rho).toBeCloseTo(x.lost / Math.max(1, x.correct), 3);
      expect(x.paperRho).toBe(PAPER.tableI[x.selector]);
    }
    expect(r['rrf']!.rho).toBe(0); // no structural term: its swap is itself
    expect(res.summary.paper.tableIII.oracle.none).toBe(0.0897);
  });

  it('B-SLM and B-AMemGuard (Table IV) are post-selection: blind to the oracle write', () => {
    const o = res.summary.arms['oracle']!.defences;
    // Every record the oracle channel selects is authenticated: a per-record trust passes it.
    expect(o.b_slm.harm).toBe(o.none.harm);
    expect(o.b_slm.ifcBlindRows).toBeGreaterThan(0);
    expect(o.b_amemguard.harm).toBeGreaterThan(0);
    expect(o.b_amemguard.ifcBlindRows).toBeGreaterThan(0);
    expect(o.authselect.harm).toBe(0);
    // The consensus self-check: a strict majority of per-memory answers, else abstain.
    const rd = (sel: readonly number[]) => ({
      answer: ({ 1: 'x', 2: 'x', 3: 'y', 4: undefined } as Record<number, string | undefined>)[
        sel[0]!
      ],
      cited: sel[0],
    });
    expect(bAMemGuard([1, 2, 3], rd)).toEqual({ r: { answer: 'x', cited: 1 }, blocked: false });
    expect(bAMemGuard([1, 3], rd).blocked).toBe(true);
    expect(bAMemGuard([4], rd)).toEqual({
      r: { answer: undefined, cited: undefined },
      blocked: false,
    });
  });

  it('the RRF row is re-run under attack, every arm (issue 19)', () => {
    const r = res.summary.rrfUnderAttack!;
    for (const arm of ['oracle', 'inject_only', 'adaptive_forged_passage'])
      expect(r[arm]?.rows, arm).toBeGreaterThan(0);
    // Structure-only writes cannot move a content-only selection …
    expect(r['oracle']!.divergence).toBe(0);
    // … an injected passage can, but it is unauthenticated: any harm is visible, never IFC-blind.
    for (const a of Object.values(r)) expect(a.blindHarmRows).toBe(0);
    const crit = res.summary.criterion.find((c) => c.selector === 'rrf')!;
    expect(crit.rows).toBe(r['oracle']!.rows);
  });

  it('the community residual is explained: AuthSelect harmful rows are the G_A selection answering wrong with no attack (issue 19)', () => {
    const c = res.summary.criterion.find((x) => x.selector === 'community')!;
    expect(c.authselectHarmRowsWithoutAttack).toBeDefined();
    // Every residual row: the replay's answer is the same with no attack at all.
    expect(c.authselectHarmRowsWithoutAttack).toBe(c.authselectHarmRows);
  });

  it('the criterion table: PPR and community open, RRF and node-distance immune', () => {
    const by = Object.fromEntries(res.summary.criterion.map((c) => [c.selector, c]));
    expect(by.ppr!.verdict).toBe('open');
    expect(by.community!.verdict).toBe('open');
    expect(by.rrf!.verdict).toBe('immune');
    expect(by.rrf!.divergence).toBe(0);
    expect(by.node_distance!.verdict).toBe('immune');
    expect(by.ppr!.rows).toBeGreaterThan(0);
    expect(by.node_distance!.rows).toBeGreaterThan(0);
  });

  it('live action: misdirected transfers without a defence, none under AuthSelect', () => {
    const l = res.summary.ledger;
    expect(l.attempted).toBeGreaterThan(0);
    expect(l.misdirected.none).toBeGreaterThan(0);
    expect(l.misdirected.justification_ifc).toBe(l.misdirected.none);
    expect(l.misdirected.authselect).toBe(0);
    expect(l.chainValid).toBe(true);
    // Issue 19: the compromised peer as an agent principal (USER_OBSERVED = A). Derived from the
    // web content it read: not authenticated, harm 0 with AuthSelect; without lineage it is
    // authenticated by the default policy (disclosed) and not by the users-only policy.
    const a = res.summary.ledgerAgent!;
    const derived = a['agent_derived_from_web']!;
    expect(derived.attempted).toBe(l.attempted);
    expect(derived.misdirected.none).toBeGreaterThan(0);
    expect(derived.misdirected.authselect).toBe(0);
    expect(a['agent_no_lineage_users_only_policy']!.misdirected.authselect).toBe(0);
    expect(a['agent_no_lineage_default_policy']!.misdirected.authselect).toBe(
      a['agent_no_lineage_default_policy']!.misdirected.none,
    );
    // Issue 19 (left open at stop 25): the agent-principal case through the product — attack
    // relations written through Memory's graph write path after the scripted agent read the
    // attacker's web page on a thread; harm 0 with AuthSelect, over-block 0 on the clean
    // questions; without lineage the default policy admits the agent (disclosed).
    const p = res.summary.product!;
    expect(p.producedBy).toMatch(/^scripted agent/);
    expect(p.questions).toBe(derived.attempted);
    expect(p.clean.overblock).toBe(0);
    const [lin, noLin] = p.arms;
    expect(lin!.attempted).toBeGreaterThan(0);
    expect(lin!.misdirected.none).toBeGreaterThan(0); // the attack works on the plain selection
    expect(lin!.misdirected.authselect).toBe(0);
    expect(lin!.blocked).toBe(0);
    expect(noLin!.misdirected.authselect).toBe(noLin!.misdirected.none);
    // … and that arm is harmful under AuthSelect: the same scripted agent and attack, with only
    // the lineage missing, gets through — so the `lin` arm's 0 is the policy's doing and the
    // assertion above can fail.
    expect(noLin!.misdirected.authselect).toBeGreaterThan(0);
    const t = new TransferLedger();
    t.commit('A', 'x');
    t.commit('B', 'y');
    expect(t.verify()).toBe(true);
    expect(Object.isFrozen(t.entries[0])).toBe(true);
  });

  it('writes CSV, summary.json and a self-contained HTML report', async () => {
    const files = await writeAuthSelectReport(res, dir);
    expect(files.map((f) => f.split('/').pop())).toEqual([
      'rows.csv',
      'criterion.csv',
      'summary.json',
      'report.html',
    ]);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|src=|href=/);
    expect(readFileSync(join(dir, 'rows.csv'), 'utf8').split('\n')[0]).toContain('defence');
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).eval).toBe('authselect');
  });

  it('the CLI subcommand prints one JSON summary with --json, the same as a second run (deterministic)', async () => {
    const program = new Command().exitOverride();
    registerEvalAuthselect(program.command('eval'));
    const out: string[] = [];
    const w = vi
      .spyOn(process.stdout, 'write')
      .mockImplementation((c: string | Uint8Array) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await program.parseAsync([
        'node',
        'memwarden',
        'eval',
        'authselect',
        '--json',
        '--no-files',
        '--attack-seeds',
        '1',
      ]);
    } finally {
      w.mockRestore();
      e.mockRestore();
    }
    expect(out.length).toBe(1);
    const s = JSON.parse(out[0]!);
    for (const d of DEFENCES)
      expect(Object.keys(s.defences[d])).toEqual(
        expect.arrayContaining(['harm', 'overblock', 'ifcBlindRows']),
      );
    // Deterministic: the CLI's run (same options, a fresh store) gives the library run's summary.
    expect({ ...s, runtimeMs: 0 }).toEqual(
      JSON.parse(JSON.stringify({ ...res.summary, runtimeMs: 0 })),
    );
  }, 180_000);
});
