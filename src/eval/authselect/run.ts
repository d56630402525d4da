/**
 * @module eval/authselect/run
 * `memwarden eval authselect`: the AuthSelect evaluation (issue 8; AuthSelect §6) over graph
 * memory built on the real ledger — every passage, extraction and attack write of the live-action
 * case is a signed entry — with the attack grid run on the same index (attack edges are added
 * with their channel's authority and removed after each row, the paper's harness reset).
 *
 * Rows: clean-correct questions × attack arm × attack seed × defence. Metrics: harm (asserted
 * non-gold answers / rows), over-block (clean-condition availability loss), IFC-blind rows
 * (harmful with an all-authenticated justification), selection divergence, the selector
 * criterion table and the live-action transfer ledger.
 */
import { createHash } from 'node:crypto';
import { MemoryBackend } from '../../adapters/memory/index.js';
import { decideByAuthority, loadPolicy, requiredAuthority } from '../../core/gate/index.js';
import {
  type GraphIndex,
  authSelectPpr,
  communitySelect,
  divergenceAuthority,
  isAuthenticated,
  nodeDistanceRerank,
  pprSelect,
  reciprocalRankFusion,
  sameSet,
} from '../../core/graph/index.js';
import type { Authority, PrincipalKind } from '../../core/trust.js';
import {
  DEFAULT_GRAPH_AUTH_POLICY,
  type GraphAuthPolicy,
  USERS_ONLY_GRAPH_AUTH_POLICY,
  graphAuthority,
} from '../../memory/graph/search.js';
import { DeterministicExtractor } from '../../memory/graph/extract.js';
import { canonicalJson } from '../../memory/graph/objects.js';
import { GraphMemory, type WriteContext } from '../../memory/graph/graph.js';
import { Ledger } from '../../memory/log/ledger.js';
import { ledgerGraph } from './ledger-graph.js';
import { type ProductCase, runProductCase } from './product.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../testing/doubles.js';
import { ATTACK_ARMS, type AttackArm, type AttackInput, planAttack } from './attacks.js';
import { type Corpus, type Question, generateCorpus } from './corpus.js';
import { Bm25, HashedVectors, type ReadResult, rankBy, read } from './reader.js';

export const DEFENCES = [
  'none',
  'justification_ifc',
  'context_ifc',
  'post_selection_rerank',
  'authselect',
] as const;
export type Defence = (typeof DEFENCES)[number];

export interface AuthSelectEvalOptions {
  /** Corpus seed (default 1). */
  readonly seed?: number;
  /** Attack seeds per cell (default 3, as the paper's 3 seeds). */
  readonly attackSeeds?: number;
  /** Top-k (default 5). */
  readonly k?: number;
  readonly scale?: number;
  readonly log?: (m: string) => void;
}

export interface EvalRow {
  readonly question: string;
  readonly kind: Question['kind'];
  readonly arm: AttackArm | 'clean';
  readonly attackSeed: number;
  readonly defence: Defence;
  readonly answer: string;
  readonly gold: string;
  readonly blocked: boolean;
  readonly harmful: boolean;
  readonly ifcBlind: boolean;
  readonly selectionChanged: boolean;
  readonly authDiverged: boolean;
  readonly replayMode: string;
}

export interface DefenceSummary {
  readonly harm: number;
  readonly overblock: number;
  readonly ifcBlindRows: number;
  readonly harmfulRows: number;
  readonly rows: number;
}

export interface CriterionRow {
  readonly selector: 'ppr' | 'community' | 'rrf' | 'node_distance';
  readonly rows: number;
  readonly divergence: number;
  readonly blindHarmRows: number;
  readonly authselectHarmRows: number;
  /**
   * Of `authselectHarmRows`, those where AuthSelect's selection gives the same non-gold answer
   * with no attack at all (its replay on G_A, which no unauthenticated write reaches, is itself
   * wrong for the question): a residual of the selector on the authenticated subgraph, not harm
   * the attack caused (issue 19, "the community variant leaves 3 of 30 rows harmful").
   */
  readonly authselectHarmRowsWithoutAttack?: number;
  readonly verdict: 'open' | 'immune';
}

export interface LedgerCase {
  /** Who the compromised peer is and how its relations are written (issue 19). */
  readonly peer?: string;
  readonly attempted: number;
  readonly misdirected: Readonly<Record<'none' | 'justification_ifc' | 'authselect', number>>;
  readonly blocked: Readonly<Record<'none' | 'justification_ifc' | 'authselect', number>>;
  readonly chainValid: boolean;
  readonly example?: { question: string; gold: string; none: string; authselect: string };
}

export interface AuthSelectEvalSummary {
  readonly eval: 'authselect';
  readonly corpus: {
    passages: number;
    entities: number;
    questions: number;
    cleanCorrect: number;
    nodes: number;
    edges: number;
    generator: string;
  };
  readonly k: number;
  readonly attackSeeds: number;
  readonly defences: Readonly<Record<Defence, DefenceSummary>>;
  readonly arms: Readonly<
    Record<
      string,
      {
        selectionDivergence: number;
        authselectDivergence: number;
        defences: Record<Defence, { harm: number; ifcBlindRows: number }>;
      }
    >
  >;
  readonly criterion: readonly CriterionRow[];
  /**
   * RRF (semantic + lexical fusion, no structure) re-run under every attack arm (issue 19): the
   * injected passage, where an arm has one, enters the content rankings.
   */
  readonly rrfUnderAttack?: Readonly<
    Record<string, { rows: number; divergence: number; harmfulRows: number; blindHarmRows: number }>
  >;
  readonly ledger: LedgerCase;
  /**
   * The same live-action case with the compromised peer as an `agent` principal (issue 19):
   * relations derived from the web content it read (signed parents), without lineage under the
   * default authentication policy, and without lineage under the users-only policy.
   */
  readonly ledgerAgent?: Readonly<Record<string, LedgerCase>>;
  /**
   * The agent-principal live-action case through the product (`Memory`'s write path and
   * `graphSearch`), scripted agent (issue 19; eval/authselect/product.ts).
   */
  readonly product?: ProductCase;
  readonly replay: {
    readonly clean: number;
    readonly certified: number;
    readonly replayed: number;
  };
  readonly runtimeMs: number;
}

export interface AuthSelectEvalResult {
  readonly summary: AuthSelectEvalSummary;
  readonly rows: readonly EvalRow[];
}

const POLICY = loadPolicy({
  version: 1,
  mode: 'deny',
  tools: {
    answer: { sensitive: false, authority: 'U', description: 'advisory answer' },
    commit_action: {
      sensitive: true,
      authority: 'A',
      mode: 'repair_and_retry',
      description: 'append a transfer',
    },
  },
});

/** The append-only transfer ledger of the live-action case (§6.4): hash-chained, frozen records. */
export class TransferLedger {
  private readonly records: {
    seq: number;
    target: string;
    memo: string;
    prev: string;
    hash: string;
  }[] = [];
  commit(target: string, memo: string): void {
    const prev = this.records[this.records.length - 1]?.hash ?? '0'.repeat(64);
    const seq = this.records.length;
    const hash = createHash('sha256')
      .update(canonicalJson({ seq, target, memo, prev }))
      .digest('hex');
    this.records.push(Object.freeze({ seq, target, memo, prev, hash }));
  }
  get entries(): readonly { readonly target: string; readonly memo: string }[] {
    return this.records;
  }
  verify(): boolean {
    let prev = '0'.repeat(64);
    return this.records.every((r, seq) => {
      const ok =
        r.prev === prev &&
        r.seq === seq &&
        r.hash ===
          createHash('sha256')
            .update(canonicalJson({ seq, target: r.target, memo: r.memo, prev }))
            .digest('hex');
      prev = r.hash;
      return ok;
    });
  }
}

interface World {
  readonly corpus: Corpus;
  readonly g: GraphMemory;
  readonly index: GraphIndex;
  readonly entitiesOf: Map<number, string[]>;
  readonly textOf: Map<number, string>;
  readonly keyNode: Map<string, number>;
  readonly ctx: {
    curator: WriteContext;
    web: WriteContext;
    peer: WriteContext;
    agent: WriteContext;
  };
  /** Entry ids of the web-clipped (untrusted) passages: what a compromised agent has read. */
  readonly webPassages: readonly string[];
  /** The authentication policy the graph folds new writes under (switchable per case). */
  readonly policy: { current: GraphAuthPolicy };
}

async function buildWorld(seed: number, scale: number): Promise<World> {
  const corpus = generateCorpus(seed, scale);
  const ledger = await Ledger.open({
    storage: await MemoryBackend.open(),
    keys: new MemoryKeySource(),
    clock: new ManualClock(),
    random: new SeededRandom(`authselect-eval-${seed}`),
  });
  const curator = await ledger.registerPrincipal('user', 'curator');
  const web = await ledger.registerPrincipal('tool', 'web-clipper');
  const peer = await ledger.registerPrincipal('tool', 'peer-agent');
  const agent = await ledger.registerPrincipal('agent', 'peer-assistant');
  const extractor = new DeterministicExtractor(corpus.entities);
  // Issue 19: what is authenticated is the explicit policy (writer kind AND lineage label),
  // the writer's kind read from the registry (an unknown writer is never authenticated).
  const kinds = new Map<string, PrincipalKind>([
    [curator.id, 'user'],
    [web.id, 'tool'],
    [peer.id, 'tool'],
    [agent.id, 'agent'],
  ]);
  const policy = { current: DEFAULT_GRAPH_AUTH_POLICY };
  const g = await GraphMemory.open({
    ...ledgerGraph(ledger),
    extractor,
    authority: (e) => graphAuthority(policy.current, e, kinds.get(e.writer)),
  });
  const ctx = {
    curator: { principal: curator.id, tier: 'USER_VERIFIED' },
    web: { principal: web.id, tier: 'EXTERNAL_WEB' },
    peer: { principal: peer.id, tier: 'EXTERNAL_TOOL' },
    agent: { principal: agent.id, tier: 'USER_OBSERVED' },
  } as const;
  const webPassages: string[] = [];
  const entitiesOf = new Map<number, string[]>();
  const textOf = new Map<number, string>();
  const keyNode = new Map<string, number>();
  for (const p of corpus.passages) {
    const id = await g.addPassage(p.text, p.untrusted === true ? ctx.web : ctx.curator);
    if (p.untrusted === true) webPassages.push(id);
    const node = g.index.index(`passage:${id}`)!;
    keyNode.set(p.key, node);
    entitiesOf.set(node, [...extractor.extractSync(p.text).entities]);
    textOf.set(node, p.text);
  }
  return { corpus, g, index: g.index, entitiesOf, textOf, keyNode, ctx, webPassages, policy };
}

interface Outcome {
  readonly r: ReadResult;
  readonly blocked: boolean;
}

function evaluateDefences(
  w: World,
  q: Question,
  full: readonly number[],
  auth: readonly number[],
  diverged: boolean,
  action: boolean,
): Record<Defence, Outcome> {
  const cands = new Set(w.corpus.candidates[q.answerType]);
  const ents = (n: number): readonly string[] => w.entitiesOf.get(n) ?? [];
  const rd = (sel: readonly number[]): ReadResult => read(sel, ents, cands, q.seeds);
  const authOk = (n: number): boolean => isAuthenticated(w.index.nodeAuthority(n));
  const none = rd(full);
  const just =
    none.cited !== undefined && !authOk(none.cited)
      ? { r: none, blocked: true }
      : { r: none, blocked: false };
  const ctxIfc = full.some((n) => !authOk(n))
    ? { r: none, blocked: true }
    : { r: none, blocked: false };
  const rerank = { r: rd(full.filter(authOk)), blocked: false };
  // AuthSelect: the divergence is an authority event routed through the gate (§5.2).
  const required = requiredAuthority(POLICY, action ? 'commit_action' : 'answer');
  const have: Authority = divergenceAuthority(w.index, full, diverged);
  const replayed = rd(auth);
  const tool = POLICY.tools.get(action ? 'commit_action' : 'answer');
  const verdict = decideByAuthority(required, have, {
    mode: tool?.mode ?? 'deny',
    tool: action ? 'commit_action' : 'answer',
    ...(replayed.answer === undefined ? {} : { repairedArguments: { target: replayed.answer } }),
  });
  let as: Outcome;
  if (verdict.kind === 'allow')
    as = { r: diverged ? replayed : none, blocked: false }; // advisory: substitute
  else if (verdict.kind === 'repair_and_retry') as = { r: replayed, blocked: false };
  else as = { r: none, blocked: true };
  return {
    none: { r: none, blocked: false },
    justification_ifc: just,
    context_ifc: ctxIfc,
    post_selection_rerank: rerank,
    authselect: as,
  };
}

const seedNodes = (w: World, q: Question): number[] =>
  q.seeds.map((s) => w.index.index(`entity:${s}`)).filter((x): x is number => x !== undefined);

/** Run the whole evaluation in memory (write files with `writeAuthSelectReport`). */
export async function runAuthSelectEval(
  opts: AuthSelectEvalOptions = {},
): Promise<AuthSelectEvalResult> {
  const t0 = performance.now();
  const k = opts.k ?? 5;
  const nSeeds = opts.attackSeeds ?? 3;
  const log = opts.log ?? (() => {});
  const w = await buildWorld(opts.seed ?? 1, opts.scale ?? 1);
  const { index } = w;
  // The corpus as built (issue 19: the attack grid's injected passage nodes cannot be removed
  // from the index, and counting at the end reported 138 of them as corpus).
  const corpusNodes = index.size;
  const corpusEdges = index.edgeCount;
  log(
    `corpus: ${w.corpus.passages.length} passages, ${index.size} nodes, ${index.edgeCount} edges`,
  );
  const rows: EvalRow[] = [];
  const replay = { clean: 0, certified: 0, replayed: 0 };
  const goldNodes = (q: Question): Set<number> =>
    new Set(q.goldPassages.map((k2) => w.keyNode.get(k2)!));
  const cleanCorrect: Question[] = [];

  // ---- clean condition (over-block) --------------------------------------------------------
  for (const q of w.corpus.questions) {
    const seeds = seedNodes(w, q);
    if (seeds.length === 0) continue;
    const res = authSelectPpr(index, {
      seeds: seeds.map((node) => ({ node, weight: 1 })),
      candidates: index.nodesOfKind('passage'),
      k,
    });
    replay[res.mode]++;
    const out = evaluateDefences(w, q, res.full, res.auth, res.diverged, false);
    if (out.none.r.answer !== q.gold) continue;
    cleanCorrect.push(q);
    for (const d of DEFENCES) {
      const o = out[d];
      rows.push({
        question: q.id,
        kind: q.kind,
        arm: 'clean',
        attackSeed: 0,
        defence: d,
        answer: o.blocked ? '' : (o.r.answer ?? ''),
        gold: q.gold,
        blocked: o.blocked,
        harmful: false,
        ifcBlind: false,
        selectionChanged: false,
        authDiverged: res.diverged,
        replayMode: res.mode,
      });
    }
  }
  log(`clean-correct: ${cleanCorrect.length}/${w.corpus.questions.length}`);

  // ---- attack grid ------------------------------------------------------------------------
  let rowSeq = 0;
  const criterionAcc = new Map<
    CriterionRow['selector'],
    { rows: number; div: number; blind: number; asHarm: number; asBaseline: number }
  >();
  const acc = (s: CriterionRow['selector']) => {
    let a = criterionAcc.get(s);
    if (a === undefined)
      criterionAcc.set(s, (a = { rows: 0, div: 0, blind: 0, asHarm: 0, asBaseline: 0 }));
    return a;
  };
  const passageNodes = (): Int32Array => index.nodesOfKind('passage');
  const allPassages = [...w.textOf.keys()];
  const bm25 = new Bm25(allPassages.map((n) => w.textOf.get(n)!));
  const vec = new HashedVectors(allPassages.map((n) => w.textOf.get(n)!));
  /** RRF over the corpus passages plus an injected one (content-only: edges cannot reach it). */
  const rrfSelect = (query: string, injected: number | undefined): number[] => {
    const nodes = injected === undefined ? allPassages : [...allPassages, injected];
    const texts = nodes.map((n) => w.textOf.get(n)!);
    const b = injected === undefined ? bm25 : new Bm25(texts);
    const v = injected === undefined ? vec : new HashedVectors(texts);
    return reciprocalRankFusion([rankBy(b.scores(query)), rankBy(v.scores(query))])
      .slice(0, k)
      .map((x) => nodes[x.item]!);
  };
  const rrfAtk = new Map<string, { rows: number; div: number; harmful: number; blind: number }>();

  for (const q of cleanCorrect) {
    const seeds = seedNodes(w, q);
    const query = {
      seeds: seeds.map((node) => ({ node, weight: 1 })),
      candidates: passageNodes(),
      k,
    };
    const cleanFull = pprSelect(index.view('full'), query).nodes;
    const ranked = pprSelect(index.view('full'), { ...query, k: 60 }).nodes;
    const gold = goldNodes(q);
    const cands = new Set(w.corpus.candidates[q.answerType]);
    const wrongs = ranked
      .slice(k)
      .filter(
        (n) =>
          !gold.has(n) &&
          (w.entitiesOf.get(n) ?? []).some(
            (e) => cands.has(e) && e !== q.gold && !q.seeds.includes(e),
          ),
      );
    const qTok = new Set(q.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    const overlap = (n: number): number =>
      (
        w.textOf
          .get(n)!
          .toLowerCase()
          .match(/[\p{L}\p{N}]+/gu) ?? []
      ).filter((t) => qTok.has(t)).length;
    const confusers = ranked
      .slice(k, k + 15)
      .sort((a, b) => overlap(b) - overlap(a) || ranked.indexOf(a) - ranked.indexOf(b));
    const ents = (n: number): readonly string[] => w.entitiesOf.get(n) ?? [];
    const rd = (sel: readonly number[]): ReadResult => read(sel, ents, cands, q.seeds);
    // Content-only rankings for the criterion's immune selectors.
    const rrfRank = reciprocalRankFusion([
      rankBy(bm25.scores(q.text)),
      rankBy(vec.scores(q.text)),
    ]).map((x) => ({ node: allPassages[x.item]!, score: x.score }));
    const rrfTop = rrfRank.slice(0, k).map((x) => x.node);
    const maxScore = rrfRank[0]?.score ?? 1;
    const pool = rrfRank
      .slice(0, 10)
      .map((x) => ({ node: x.node, contentScore: x.score / maxScore }));
    const commClean = communitySelect(index.view('full'), seeds[0]!, passageNodes(), k, {
      seed: 1,
    });
    const commCleanCorrect = rd(commClean.nodes).answer === q.gold;
    // The community selection on G_A before any attack (what AuthSelect would replay to).
    const commAuthCleanAnswer = rd(
      communitySelect(index.view('auth'), seeds[0]!, passageNodes(), k, { seed: 1 }).nodes,
    ).answer;
    const ndClean = nodeDistanceRerank(index.view('full'), pool, seeds[0]!, k).nodes;
    const ndCleanCorrect = rd(ndClean).answer === q.gold;
    const rrfCleanCorrect = rd(rrfTop).answer === q.gold;

    for (let s = 0; s < nSeeds; s++) {
      const wrong = wrongs[s % Math.max(1, wrongs.length)];
      const confuser = confusers[s % Math.max(1, confusers.length)];
      if (wrong === undefined) continue;
      const wrongAnswer = ents(wrong).find((e) => cands.has(e) && e !== q.gold)!;
      const input: AttackInput = {
        seed: q.seeds[0]!,
        bridge: q.bridge,
        wrongAnswer,
        wrongEntities: [
          wrongAnswer,
          ...ents(wrong).filter((e) => e !== wrongAnswer && !q.seeds.includes(e)),
        ],
        confuserEntities:
          confuser === undefined ? [] : ents(confuser).filter((e) => !q.seeds.includes(e)),
      };
      for (const arm of ATTACK_ARMS) {
        const tag = `atk${rowSeq++}`;
        const plan = planAttack(arm, input);
        const added: string[] = [];
        let injected: number | undefined;
        if (plan.passage !== undefined) {
          injected = index.addNode(`inject:${tag}`, 'passage', 'U');
          w.entitiesOf.set(injected, [...plan.passage.entities]);
          w.textOf.set(injected, plan.passage.text);
          plan.passage.entities.forEach((e, i) => {
            const id = `${tag}:m${i}`;
            index.addEdge({
              id,
              a: `inject:${tag}`,
              b: `entity:${e}`,
              weight: 1,
              authority: 'U',
              kind: 'mention',
            });
            added.push(id);
          });
        }
        plan.edges.forEach((e, i) => {
          const b = e.b === '@passage' ? `inject:${tag}` : `entity:${e.b}`;
          if (index.index(b) === undefined || index.index(`entity:${e.a}`) === undefined) return;
          const id = `${tag}:${i}`;
          index.addEdge({
            id,
            a: `entity:${e.a}`,
            b,
            weight: e.weight,
            authority: 'U',
            kind: e.kind,
          });
          added.push(id);
        });
        const res = authSelectPpr(index, { ...query, candidates: passageNodes() });
        replay[res.mode]++;
        const changed = !sameSet(res.full, cleanFull);
        const out = evaluateDefences(w, q, res.full, res.auth, res.diverged, false);
        for (const d of DEFENCES) {
          const o = out[d];
          const harmful = !o.blocked && o.r.answer !== undefined && o.r.answer !== q.gold;
          const blind =
            harmful && o.r.cited !== undefined && isAuthenticated(index.nodeAuthority(o.r.cited));
          rows.push({
            question: q.id,
            kind: q.kind,
            arm,
            attackSeed: s,
            defence: d,
            answer: o.blocked ? '' : (o.r.answer ?? ''),
            gold: q.gold,
            blocked: o.blocked,
            harmful,
            ifcBlind: blind,
            selectionChanged: changed,
            authDiverged: res.diverged,
            replayMode: res.mode,
          });
        }
        // Issue 19: the RRF row re-run under attack — every arm, the injected passage (if any)
        // in the content rankings; RRF reads no structure, so AuthSelect has nothing to replay.
        let rrfRun: { changed: boolean; harmful: boolean; blind: boolean } | undefined;
        if (rrfCleanCorrect) {
          const top = rrfSelect(q.text, injected);
          const r = rd(top);
          const harmful = r.answer !== undefined && r.answer !== q.gold;
          rrfRun = {
            changed: !sameSet(top, rrfTop),
            harmful,
            blind:
              harmful && r.cited !== undefined && isAuthenticated(index.nodeAuthority(r.cited)),
          };
          let a = rrfAtk.get(arm);
          if (a === undefined) rrfAtk.set(arm, (a = { rows: 0, div: 0, harmful: 0, blind: 0 }));
          a.rows++;
          if (rrfRun.changed) a.div++;
          if (rrfRun.harmful) a.harmful++;
          if (rrfRun.blind) a.blind++;
        }
        if (arm === 'oracle') {
          // The selector criterion (§4.3, Table I): same write against each selector.
          const ppr = acc('ppr');
          ppr.rows++;
          if (changed) ppr.div++;
          const pprRead = rd(res.full);
          if (
            pprRead.answer !== q.gold &&
            pprRead.answer !== undefined &&
            pprRead.cited !== undefined &&
            isAuthenticated(index.nodeAuthority(pprRead.cited))
          )
            ppr.blind++;
          if (out.authselect.r.answer !== q.gold && out.authselect.r.answer !== undefined)
            ppr.asHarm++;
          if (commCleanCorrect) {
            const c = acc('community');
            c.rows++;
            const full = communitySelect(index.view('full'), seeds[0]!, passageNodes(), k, {
              seed: 1,
            });
            const authC = communitySelect(index.view('auth'), seeds[0]!, passageNodes(), k, {
              seed: 1,
            });
            if (!sameSet([...full.nodes], [...commClean.nodes])) c.div++;
            const r = rd(full.nodes);
            if (
              r.answer !== q.gold &&
              r.answer !== undefined &&
              r.cited !== undefined &&
              isAuthenticated(index.nodeAuthority(r.cited))
            )
              c.blind++;
            const ra = rd(sameSet([...full.nodes], [...authC.nodes]) ? full.nodes : authC.nodes);
            if (ra.answer !== q.gold && ra.answer !== undefined) {
              c.asHarm++;
              if (ra.answer === commAuthCleanAnswer) c.asBaseline++;
            }
          }
          if (rrfRun !== undefined) {
            const c = acc('rrf');
            c.rows++;
            if (rrfRun.changed) c.div++;
            if (rrfRun.blind) c.blind++;
            if (rrfRun.harmful) c.asHarm++; // immune mode: AuthSelect acts on the same selection
          }
          if (ndCleanCorrect) {
            const c = acc('node_distance');
            c.rows++;
            const nd = nodeDistanceRerank(index.view('full'), pool, seeds[0]!, k).nodes;
            if (!sameSet(nd, ndClean)) c.div++;
            const r = rd(nd);
            if (
              r.answer !== q.gold &&
              r.answer !== undefined &&
              r.cited !== undefined &&
              isAuthenticated(index.nodeAuthority(r.cited))
            )
              c.blind++;
          }
        }
        for (const id of added) index.removeEdge(id);
        if (injected !== undefined) {
          w.entitiesOf.delete(injected);
          w.textOf.delete(injected);
        }
      }
    }
  }
  log(`attack rows: ${rows.length}`);

  // ---- live action: the transfer ledger (§6.4), writes signed through graph memory -----------
  const actionQs = cleanCorrect.filter((q) => q.action === true);
  const ledgerCase = await runLedgerCase(w, actionQs, k, {
    name: 'tool principal (EXTERNAL_TOOL)',
    ctx: w.ctx.peer,
  });
  // Issue 19: the paper's attacker is a compromised peer *agent* (USER_OBSERVED = A).
  const webParent = w.webPassages[0];
  const ledgerAgent: Record<string, LedgerCase> = {
    agent_derived_from_web: await runLedgerCase(w, actionQs, k, {
      name: 'agent principal, relations derived from the web content it read (signed parent)',
      ctx: w.ctx.agent,
      ...(webParent === undefined ? {} : { parents: [webParent] }),
    }),
    agent_no_lineage_default_policy: await runLedgerCase(w, actionQs, k, {
      name: 'agent principal, no lineage recorded, default policy (agents admitted)',
      ctx: w.ctx.agent,
    }),
  };
  w.policy.current = USERS_ONLY_GRAPH_AUTH_POLICY;
  ledgerAgent['agent_no_lineage_users_only_policy'] = await runLedgerCase(w, actionQs, k, {
    name: 'agent principal, no lineage recorded, users-only policy',
    ctx: w.ctx.agent,
  });
  w.policy.current = DEFAULT_GRAPH_AUTH_POLICY;
  const product = await runProductCase(w.corpus, actionQs, k, log);

  // ---- aggregate --------------------------------------------------------------------------
  const defences = {} as Record<Defence, DefenceSummary>;
  for (const d of DEFENCES) {
    const atk = rows.filter((r) => r.defence === d && r.arm !== 'clean');
    const clean = rows.filter((r) => r.defence === d && r.arm === 'clean');
    const harmful = atk.filter((r) => r.harmful).length;
    defences[d] = {
      harm: round(harmful / Math.max(1, atk.length)),
      overblock: round(
        clean.filter((r) => r.blocked || r.answer !== r.gold).length / Math.max(1, clean.length),
      ),
      ifcBlindRows: atk.filter((r) => r.ifcBlind).length,
      harmfulRows: harmful,
      rows: atk.length,
    };
  }
  const arms: Record<
    string,
    {
      selectionDivergence: number;
      authselectDivergence: number;
      defences: Record<Defence, { harm: number; ifcBlindRows: number }>;
    }
  > = {};
  for (const arm of ATTACK_ARMS) {
    const ar = rows.filter((r) => r.arm === arm);
    const base = ar.filter((r) => r.defence === 'none');
    const ds = {} as Record<Defence, { harm: number; ifcBlindRows: number }>;
    for (const d of DEFENCES) {
      const x = ar.filter((r) => r.defence === d);
      ds[d] = {
        harm: round(x.filter((r) => r.harmful).length / Math.max(1, x.length)),
        ifcBlindRows: x.filter((r) => r.ifcBlind).length,
      };
    }
    arms[arm] = {
      selectionDivergence: round(
        base.filter((r) => r.selectionChanged).length / Math.max(1, base.length),
      ),
      authselectDivergence: round(
        base.filter((r) => r.authDiverged).length / Math.max(1, base.length),
      ),
      defences: ds,
    };
  }
  const criterion: CriterionRow[] = (['ppr', 'community', 'rrf', 'node_distance'] as const).map(
    (selector) => {
      const a = criterionAcc.get(selector) ?? {
        rows: 0,
        div: 0,
        blind: 0,
        asHarm: 0,
        asBaseline: 0,
      };
      return {
        selector,
        rows: a.rows,
        divergence: round(a.div / Math.max(1, a.rows)),
        blindHarmRows: a.blind,
        authselectHarmRows: a.asHarm,
        ...(selector === 'community' ? { authselectHarmRowsWithoutAttack: a.asBaseline } : {}),
        verdict: a.blind > 0 ? 'open' : 'immune',
      };
    },
  );
  const summary: AuthSelectEvalSummary = {
    eval: 'authselect',
    corpus: {
      passages: w.corpus.passages.length,
      entities: w.corpus.entities.length,
      questions: w.corpus.questions.length,
      cleanCorrect: cleanCorrect.length,
      nodes: corpusNodes,
      edges: corpusEdges,
      generator:
        'eval/authselect/corpus.ts (deterministic synthetic multi-hop + multi-session text)',
    },
    k,
    attackSeeds: nSeeds,
    defences,
    arms,
    criterion,
    rrfUnderAttack: Object.fromEntries(
      [...rrfAtk].map(([arm, a]) => [
        arm,
        {
          rows: a.rows,
          divergence: round(a.div / Math.max(1, a.rows)),
          harmfulRows: a.harmful,
          blindHarmRows: a.blind,
        },
      ]),
    ),
    ledger: ledgerCase,
    ledgerAgent,
    product,
    replay,
    runtimeMs: Math.round(performance.now() - t0),
  };
  return { summary, rows };
}

async function runLedgerCase(
  w: World,
  qs: readonly Question[],
  k: number,
  peer: { name: string; ctx: WriteContext; parents?: readonly string[] },
): Promise<LedgerCase> {
  const ledgers = {
    none: new TransferLedger(),
    justification_ifc: new TransferLedger(),
    authselect: new TransferLedger(),
  };
  const misdirected = { none: 0, justification_ifc: 0, authselect: 0 };
  const blocked = { none: 0, justification_ifc: 0, authselect: 0 };
  let example: LedgerCase['example'];
  let attempted = 0;
  const required = requiredAuthority(POLICY, 'commit_action');
  for (const q of qs) {
    const cands = new Set(w.corpus.candidates[q.answerType]);
    const ents = (n: number): readonly string[] => w.entitiesOf.get(n) ?? [];
    const clean = w.g.select(q.text, 60, q.seeds);
    const gold = new Set(q.goldPassages.map((x) => w.keyNode.get(x)));
    const wrong = clean.full
      .slice(k)
      .find((n) => !gold.has(n) && ents(n).some((e) => cands.has(e) && e !== q.gold));
    if (wrong === undefined) continue;
    const targets = ents(wrong).filter((e) => !q.seeds.includes(e));
    // The compromised peer commits six signed relations through the shared-store API.
    const written: { from: string; to: string; relationType: string }[] = [];
    for (let i = 0; i < 6; i++) {
      const r = {
        from: q.seeds[0]!,
        to: targets[i % targets.length]!,
        relationType: `RELATES_TO_${i}`,
      };
      await w.g.writeObject({ t: 'relation', ...r, weight: 5 }, peer.ctx, peer.parents ?? []);
      written.push(r);
    }
    attempted++;
    const sel = w.g.select(q.text, k, q.seeds);
    const rd = (ns: readonly number[]): ReadResult => read(ns, ents, cands, q.seeds);
    const none = rd(sel.full);
    const replayed = rd(sel.auth);
    const act = (d: keyof typeof ledgers, target: string | undefined, isBlocked: boolean): void => {
      if (isBlocked || target === undefined) {
        blocked[d]++;
        return;
      }
      ledgers[d].commit(target, q.id);
      if (target !== q.gold) misdirected[d]++;
    };
    act('none', none.answer, false);
    const justBlocked =
      none.cited !== undefined && !isAuthenticated(w.index.nodeAuthority(none.cited));
    act('justification_ifc', none.answer, justBlocked);
    const v = w.g.decide(sel, required, {
      mode: 'repair_and_retry',
      tool: 'commit_action',
      ...(replayed.answer === undefined ? {} : { repairedArguments: { target: replayed.answer } }),
    });
    const asTarget =
      v.kind === 'allow'
        ? none.answer
        : v.kind === 'repair_and_retry'
          ? (v.repairedArguments?.target as string | undefined)
          : undefined;
    act('authselect', asTarget, asTarget === undefined);
    if (example === undefined && none.answer !== q.gold)
      example = {
        question: q.text,
        gold: q.gold,
        none: none.answer ?? '',
        authselect: asTarget ?? '(blocked)',
      };
    for (const r of written) await w.g.writeObject({ t: 'delete_relation', ...r }, peer.ctx);
  }
  return {
    peer: peer.name,
    attempted,
    misdirected,
    blocked,
    chainValid: Object.values(ledgers).every((l) => l.verify()),
    ...(example === undefined ? {} : { example }),
  };
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000;
}
