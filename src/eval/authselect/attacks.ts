/**
 * @module eval/authselect/attacks
 * The structural-write attacks of AuthSelect §3.2/§6 against one question, as the writes they
 * commit (edges through an unauthenticated channel, or an injected passage). Budgets follow
 * Appendix E: heavy edges (weight 5) for the direct oracle write, unit weights for the weaker
 * arms. The attack seed picks among the attacker's top choices, so repeated seeds differ.
 *
 * - oracle: knows the gold; six heavy edges from the query seed to the entities of the best
 *   wrong-answer passage outside the selection.
 * - gold_agnostic: sees only the current top-k (as any peer can); writes the same budget towards
 *   the non-selected passage sharing the most query tokens (a query-token confuser).
 * - merge_link: one synonym / merge link between the bridge entity and the wrong passage's anchor.
 * - edge_write: one unit relation from the bridge entity to the wrong answer.
 * - collusion: two principals, three unit edges each, towards the wrong passage.
 * - adaptive_auth_endpoint: six edges whose endpoints are all authenticated nodes and avoid the
 *   seed (from the bridge entity), weight 2.
 * - adaptive_low_volume: two unit edges (clean-indistinguishable weights, Appendix B).
 * - adaptive_forged_passage: a passage forged to read like an official record naming the wrong
 *   answer, plus heavy edges to it (its channel label stays U: labels cannot be forged, §3.5).
 * - inject_only: the field-standard control — a passage through the extraction pipeline that
 *   mentions the seed and the wrong answer; no direct structure.
 */
export const ATTACK_ARMS = [
  'oracle',
  'gold_agnostic',
  'merge_link',
  'edge_write',
  'collusion',
  'adaptive_auth_endpoint',
  'adaptive_low_volume',
  'adaptive_forged_passage',
  'inject_only',
] as const;
export type AttackArm = (typeof ATTACK_ARMS)[number];

export interface AttackEdge {
  readonly a: string;
  readonly b: string;
  readonly weight: number;
  readonly kind: 'relation' | 'synonym' | 'mention';
  /** Which attacker principal writes it (collusion uses two). */
  readonly principal: 0 | 1;
}

export interface AttackPlan {
  readonly edges: readonly AttackEdge[];
  /** An injected passage (entity names it mentions; edges to them are added as mentions). */
  readonly passage?: { readonly text: string; readonly entities: readonly string[] };
}

export interface AttackInput {
  readonly seed: string;
  readonly bridge: string | undefined;
  /** Entities of the oracle's wrong passage (answer entity first). */
  readonly wrongEntities: readonly string[];
  readonly wrongAnswer: string;
  /** Entities of the gold-agnostic confuser passage. */
  readonly confuserEntities: readonly string[];
}

function spread(
  from: string,
  to: readonly string[],
  n: number,
  weight: number,
  principal: 0 | 1 = 0,
): AttackEdge[] {
  const out: AttackEdge[] = [];
  if (to.length === 0) return out;
  for (let i = 0; i < n; i++)
    out.push({ a: from, b: to[i % to.length]!, weight, kind: 'relation', principal });
  return out;
}

export function planAttack(arm: AttackArm, x: AttackInput): AttackPlan {
  const anchor = x.wrongEntities.find((e) => e !== x.wrongAnswer) ?? x.wrongAnswer;
  switch (arm) {
    case 'oracle':
      return { edges: spread(x.seed, x.wrongEntities, 6, 5) };
    case 'gold_agnostic':
      return { edges: spread(x.seed, x.confuserEntities, 6, 5) };
    case 'merge_link':
      return {
        edges: [{ a: x.bridge ?? x.seed, b: anchor, weight: 1, kind: 'synonym', principal: 0 }],
      };
    case 'edge_write':
      return {
        edges: [
          { a: x.bridge ?? x.seed, b: x.wrongAnswer, weight: 1, kind: 'relation', principal: 0 },
        ],
      };
    case 'collusion':
      return {
        edges: [
          ...spread(x.seed, x.wrongEntities, 3, 1, 0),
          ...spread(x.seed, [...x.wrongEntities].reverse(), 3, 1, 1),
        ],
      };
    case 'adaptive_auth_endpoint':
      return { edges: spread(x.bridge ?? x.seed, x.wrongEntities, 6, 2) };
    case 'adaptive_low_volume':
      return { edges: spread(x.seed, x.wrongEntities, 2, 1) };
    case 'adaptive_forged_passage':
      return {
        edges: spread(x.seed, ['@passage'], 6, 5),
        passage: {
          text: `Official record: ${x.seed} — ${x.wrongAnswer}.`,
          entities: [x.seed, x.wrongAnswer],
        },
      };
    case 'inject_only':
      return {
        edges: [],
        passage: {
          text: `${x.seed} was recently seen in connection with ${x.wrongAnswer}.`,
          entities: [x.seed, x.wrongAnswer],
        },
      };
  }
}
