/**
 * @module core/detect/instruction
 * The instruction screen (issue 22, ADR 0040): tells an instruction addressed to the agent
 * from a fact, locally, with no hosted model. Memory keeps facts, not instructions (the
 * article's Pattern 3); the public injection corpora (BIPIA, ASB, InjecAgent, AgentDojo) are
 * mostly imperative requests planted where a fact should be.
 *
 * Two parts, one linear score (log-odds):
 * - linguistic features from wink-nlp's tokenizer, sentence splitter and part-of-speech tagger
 *   (`wink-eng-lite-web-model`): imperative mood, a request marker, modals addressed to the
 *   reader, second person, the agent's output named as an object ("your response"), code,
 *   URLs / e-mail addresses / amounts / account-like tokens and whether they sit in a request
 *   frame, questions, declarative sentences, past tense, interjections …;
 * - one projection of the MiniLM vector the write path already computes onto the direction
 *   from the facts' mean to the instructions' mean in the training data (a nearest-centroid
 *   term: one dot product, and far less able than a full 384-weight layer to learn which
 *   corpus a text came from — measured, ADR 0040).
 *
 * The weights (`instruction-model.ts`) are trained by `scripts/train-instruction-screen.mjs`
 * on redistributable data only; per-tier thresholds come from benign false-positive budgets.
 * A finding names the features that pushed the score up, so a reviewer sees why.
 *
 * Cost: the tagger is loaded on first use (~0.1 s, ~20 MB of heap); a short write takes
 * tens of microseconds. Text past `MAX_CHARS` is not read (the length rules cover it).
 */
import winkNLP from 'wink-nlp';
import winkModel from 'wink-eng-lite-web-model';
import { type Finding, abstain, finding } from './types.js';

/** Characters of a write the tagger reads (the start of the text). */
export const MAX_CHARS = 4000;

/** Feature names in vector order, each with the phrase a finding shows for it. */
export const INSTRUCTION_FEATURES = [
  ['imperative', 'imperative sentences'],
  ['imperative_first', 'opens with an imperative'],
  ['request_marker', 'request marker (please / kindly)'],
  ['addressed_modal', 'modal addressed to the reader (you should / can you / make sure)'],
  ['second_person', 'second person (you / your)'],
  ['output_frame', "names the agent's output (your response / reply / answer / code)"],
  ['code', 'code block or shell / code line'],
  ['url', 'URL'],
  ['email', 'e-mail address'],
  ['money', 'currency amount'],
  ['account_id', 'account-like token'],
  ['target_in_request', 'URL / address / amount / account / code in a request frame'],
  ['action_verb', 'imperative of a tool action (send, transfer, delete, grant …)'],
  ['output_verb', 'imperative shaping the output (include, append, reply, translate …)'],
  ['question', 'questions'],
  ['declarative', 'declarative sentences'],
  ['past_tense', 'past tense'],
  ['first_person', 'first person'],
  ['third_person', 'third person'],
  ['interjection', 'interjection'],
  ['exclaim', 'exclamations'],
  ['length', 'length'],
  ['agent_frame', 'names the user / assistant / agent'],
] as const;

export type InstructionFeature = (typeof INSTRUCTION_FEATURES)[number][0];
/** The MiniLM term's name in contributions and findings. */
export const EMBEDDING_TERM = 'minilm_direction';
const EMBEDDING_LABEL = 'reads like the instruction examples (MiniLM)';

/** A trained screen: linear weights over the features plus the MiniLM direction term. */
export interface InstructionModel {
  /** Identifies the weights (training data, features, procedure). */
  readonly version: string;
  /** The embedder whose vectors `direction` lives among (`Embedder.name`). */
  readonly embedder: string;
  /** Feature names in weight order (must equal `INSTRUCTION_FEATURES`). */
  readonly features: readonly string[];
  readonly weights: readonly number[];
  readonly bias: number;
  /** Unit vector from the facts' mean to the instructions' mean. */
  readonly direction: readonly number[];
  /** Weight of `scale · direction·v`. */
  readonly directionWeight: number;
  readonly directionScale: number;
  /** Default per-tier thresholds on the score (log-odds), from benign FP budgets. */
  readonly thresholds: Readonly<Record<ScreenedTier, number>>;
}

/** The tiers the screen sets a threshold for (OPERATOR writes are not screened). */
export type ScreenedTier = 'EXTERNAL_WEB' | 'EXTERNAL_TOOL' | 'USER_OBSERVED' | 'USER_VERIFIED';

export interface InstructionScore {
  /** Log-odds that the text is an instruction to the agent. */
  readonly score: number;
  /** Each term's share of the score (weight × value), by feature name; plus the bias. */
  readonly contributions: ReadonlyMap<string, number>;
  /** False when no usable vector was given: the MiniLM term counted 0. */
  readonly embedded: boolean;
}

// --- the tagger ------------------------------------------------------------------------

type Nlp = ReturnType<typeof winkNLP>;
let nlp: Nlp | undefined;
function tagger(): Nlp {
  // Sentence boundaries and part of speech only: negation, sentiment and entities are not
  // used, and skipping them halves the cost.
  nlp ??= winkNLP(winkModel, ['sbd', 'pos']);
  return nlp;
}

/** Load the tagger now rather than on the first screened write. */
export function warmInstructionScreen(): void {
  tagger();
}

// --- lexicons (general English; none drawn from the evaluation corpora) ----------------

const words = (s: string): ReadonlySet<string> =>
  new Set(s.split(/\s+/).filter((w) => w.length > 0));

/** Tokens skipped before a sentence's first word (discourse markers, list bullets). */
const LEAD_SKIP = words(
  `please kindly now also then and just first next finally additionally immediately simply
   quickly so , - * " ' : • > ( )`,
);
/** Tool and transaction verbs: what an agent does in the world. */
const ACTION_VERBS = words(
  `send transfer forward email post share delete remove invite grant change update download
   install run execute pay purchase buy order book schedule create disable enable access
   retrieve move copy upload reset monitor manage deposit withdraw cancel set modify add unlock
   lock shut turn open close initiate deploy export collect publish sell approve authorize
   redirect visit click navigate call contact message text tweet concatenate make get find read
   review analyze analyse check verify confirm ensure conduct perform process handle adjust
   release terminate halt stop start launch secure`,
);
/** Verbs that shape the agent's output. */
const OUTPUT_VERBS = words(
  `include insert append incorporate integrate mention respond reply answer write translate
   summarize summarise rephrase use begin end replace provide tell explain list give recommend
   suggest describe show encode reverse rewrite format embed inject fuse upgrade enhance modify
   say state output print display introduce emphasize highlight conclude promote advertise
   substitute group rearrange spell help compose draft generate produce offer advise ignore
   disregard forget pretend act imagine remember note remind keep let do be never always`,
);
/**
 * Common base-form verbs: the tagger reads a capitalised sentence-initial word as a proper
 * noun ("Use numbers …" → PROPN); one of these there, not followed by a verb, is an imperative.
 */
const COMMON_VERBS = words(
  `accept add adjust advise allow analyze analyse answer append apply arrange ask assign attach
   avoid back be begin block book break bring build buy calculate call cancel change charge check
   choose classify clean clear click close collect combine compare compile complete compose
   compute confirm connect consider contact continue convert copy correct count create cut decide
   decode decrease define delete describe design detect determine disable discuss display do
   download drop edit email embed emphasize enable encode encrypt end enhance ensure enter
   estimate evaluate examine execute expand explain export extract fetch fill find finish fix
   follow forget format forward fuse generate get give go grant group guess help hide highlight
   identify ignore implement import improve include increase incorporate inform insert install
   integrate introduce invite join keep label launch learn leave let limit link list load locate
   lock log look make manage mark measure mention merge modify monitor move name navigate note
   notify obtain open order organize organise outline paste pay perform pick place plan play post
   prepare present pretend print prioritize process produce promote provide publish pull
   purchase push put rank rate read rearrange record recommend redirect reduce refer refresh
   register reject release remember remind remove rename repeat rephrase replace reply report
   request reserve reset resolve respond restart restore retrieve return reverse review rewrite
   run save scan schedule scramble search secure select sell send separate set share shift show
   shut sign simulate skip sort specify spell split start state stop store submit substitute
   suggest summarize summarise support switch take talk teach tell test text think track
   transfer transform translate try turn type unlock update upgrade upload use validate verify
   view visit wait warn watch withdraw write`,
);
const OUTPUT_NOUNS = words(
  `response responses reply replies answer answers output message summary code implementation
   text writing program script solution result results codebase`,
);
const MODALS = words('should must shall need have will can could would may might ought');
const YOU = words("you your yours yourself yourselves u you're you'll you've");
const FIRST = words('i me my mine myself we us our ours');
const THIRD = words('he she they it his her their its him them');
const AGENT = words('user users assistant agent ai chatbot model');
const SUBJECT_POS = new Set(['PRON', 'PROPN', 'NOUN', 'DET', 'NUM']);

const CODE_RE =
  /```|^\s*(?:import\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*$|from\s+[\w.]+\s+import\s|def\s+\w+\s*\(|function\s+\w+\s*\(|(?:const|let|var)\s+\w+\s*=|#include\s*<|(?:sudo|curl|wget|chmod)\s)|\b(?:os\.system|subprocess\.\w+|eval\(|exec\()/m;
/** Account-like: ≥ 5 characters mixing digits with letters or separators, or ≥ 6 digits. */
const ACCOUNT_RE = /^(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z_-])[\w.-]{5,}$|^\d{6,}$/;
/** …but not a date, a time, an ordinal, a decimal or a grouped number. */
const NOT_ACCOUNT_RE =
  /^\d{4}-\d{2}-\d{2}$|^\d+(?:st|nd|rd|th)$|^\d{1,2}[:.]\d{2}$|^\d+(?:[.,]\d+)+$/i;

const N = INSTRUCTION_FEATURES.length;
const IDX = Object.fromEntries(INSTRUCTION_FEATURES.map(([k], i) => [k, i])) as Record<
  InstructionFeature,
  number
>;

/**
 * The feature vector of a text (values in [0, 1]). Never throws on content: a text the
 * tagger cannot read yields all zeros.
 */
export function instructionFeatures(text: string): Float64Array {
  const f = new Float64Array(N);
  const t =
    typeof text === 'string' ? (text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text) : '';
  if (t.trim().length === 0) return f;
  let norm: string[];
  let pos: string[];
  let type: string[];
  let lemma: string[];
  let spans: number[][];
  try {
    const nlp = tagger();
    const its = nlp.its;
    const doc = nlp.readDoc(t);
    const toks = doc.tokens();
    norm = toks.out(its.normal) as string[];
    pos = toks.out(its.pos) as string[];
    type = toks.out(its.type) as string[];
    // wink-nlp's typings give `its.lemma` a signature `out` does not accept; it is a token its.
    lemma = toks.out(its.lemma as unknown as typeof its.normal) as string[];
    spans = doc.sentences().out(its.span) as unknown as number[][];
  } catch {
    return f;
  }
  let you = 0;
  let first = 0;
  let third = 0;
  let intj = 0;
  let please = 0;
  let outFrame = 0;
  let url = 0;
  let email = 0;
  let money = 0;
  let acct = 0;
  let agent = 0;
  let modal = 0;
  let verbs = 0;
  let past = 0;
  const n = norm.length;
  for (let i = 0; i < n; i++) {
    const w = norm[i] as string;
    const p = pos[i];
    if (YOU.has(w)) you++;
    else if (FIRST.has(w)) first++;
    else if (THIRD.has(w)) third++;
    if (w === 'please' || w === 'kindly') please++;
    else if (p === 'INTJ') intj++;
    const ty = type[i];
    if (ty === 'url') url++;
    else if (ty === 'email') email++;
    else if (ty === 'currency') money++;
    else if ((ty === 'number' || ty === 'word') && ACCOUNT_RE.test(w) && !NOT_ACCOUNT_RE.test(w))
      acct++;
    const next = i + 1 < n ? (norm[i + 1] as string) : '';
    if ((w === 'your' || w === 'the') && OUTPUT_NOUNS.has(next)) outFrame++;
    if (AGENT.has(w)) agent++;
    if (p === 'VERB') {
      verbs++;
      if (lemma[i] !== w && !w.endsWith('ing') && !w.endsWith('s')) past++;
    }
    if (MODALS.has(w) && (YOU.has(next) || (i > 0 && YOU.has(norm[i - 1] as string)))) modal++;
    else if (w === 'make' && next === 'sure') modal++;
    else if ((w === 'want' || w === 'need') && YOU.has(next) && norm[i + 2] === 'to') modal++;
  }
  let imp = 0;
  let impFirst = 0;
  let questions = 0;
  let declarative = 0;
  let exclaim = 0;
  let action = 0;
  let output = 0;
  for (let si = 0; si < spans.length; si++) {
    const span = spans[si] as number[];
    const a = span[0] as number;
    const b = span[1] as number;
    const last = norm[b];
    if (last === '?' || norm[b - 1] === '?') questions++;
    if (last === '!') exclaim++;
    let k = a;
    while (
      k <= b &&
      (LEAD_SKIP.has(norm[k] as string) ||
        pos[k] === 'PUNCT' ||
        pos[k] === 'SYM' ||
        type[k] === 'tabCRLF' ||
        (pos[k] === 'NUM' && /^\d+[.)]?$/.test(norm[k] as string)))
    )
      k++;
    if (k > b) continue;
    const w = norm[k] as string;
    const p = pos[k];
    const next = k + 1 <= b ? pos[k + 1] : 'PUNCT';
    const nw = norm[k + 1] ?? '';
    // "Mark went …", "Will said …": a finite verb after the first word makes it a subject;
    // "Consider appending …" (a gerund) does not.
    const finiteNext =
      next === 'AUX' || (next === 'VERB' && lemma[k + 1] !== nw && !nw.endsWith('ing'));
    const subjectFollows = nw === 'you' || nw === 'i' || finiteNext;
    const imperative =
      !subjectFollows &&
      ((p === 'VERB' && lemma[k] === w) ||
        (p === 'AUX' && (w === 'do' || w === 'be' || w === "don't")) ||
        ((p === 'PROPN' || p === 'NOUN' || p === 'ADJ') &&
          COMMON_VERBS.has(w) &&
          next !== 'PUNCT'));
    if (imperative) {
      imp++;
      if (si === 0) impFirst = 1;
      if (ACTION_VERBS.has(w)) action++;
      if (OUTPUT_VERBS.has(w)) output++;
    } else if (last !== '?') {
      for (let j = a; j <= b; j++) {
        const pj = pos[j];
        if (pj === 'VERB' || pj === 'AUX') break;
        if (SUBJECT_POS.has(pj as string)) {
          declarative++;
          break;
        }
      }
    }
  }
  const s = Math.max(1, spans.length);
  const code = CODE_RE.test(t) ? 1 : 0;
  const requestFrame = imp > 0 || modal > 0 || please > 0;
  f[IDX.imperative] = imp / s;
  f[IDX.imperative_first] = impFirst;
  f[IDX.request_marker] = please > 0 ? 1 : 0;
  f[IDX.addressed_modal] = Math.min(1, modal);
  f[IDX.second_person] = Math.min(1, you / 3);
  f[IDX.output_frame] = Math.min(1, outFrame);
  f[IDX.code] = code;
  f[IDX.url] = url > 0 ? 1 : 0;
  f[IDX.email] = email > 0 ? 1 : 0;
  f[IDX.money] = money > 0 ? 1 : 0;
  f[IDX.account_id] = acct > 0 ? 1 : 0;
  f[IDX.target_in_request] = requestFrame && url + email + money + acct + code > 0 ? 1 : 0;
  f[IDX.action_verb] = action > 0 ? 1 : 0;
  f[IDX.output_verb] = output > 0 ? 1 : 0;
  f[IDX.question] = questions / s;
  f[IDX.declarative] = declarative / s;
  f[IDX.past_tense] = verbs === 0 ? 0 : past / verbs;
  f[IDX.first_person] = Math.min(1, first / 3);
  f[IDX.third_person] = Math.min(1, third / 3);
  f[IDX.interjection] = Math.min(1, intj);
  f[IDX.exclaim] = exclaim / s;
  f[IDX.length] = Math.min(1, Math.log1p(t.length) / Math.log1p(2000));
  f[IDX.agent_frame] = agent > 0 ? 1 : 0;
  return f;
}

/** `direction · v` when `v` fits the model, else undefined. */
export function directionProjection(
  m: InstructionModel,
  v: Float32Array | undefined,
): number | undefined {
  const d = m.direction;
  if (v === undefined || v.length !== d.length || d.length === 0) return undefined;
  let z = 0;
  for (let i = 0; i < d.length; i++) z += (d[i] as number) * (v[i] as number);
  return Number.isFinite(z) ? z : undefined;
}

/** Score precomputed features (and the vector's projection) under a model. */
export function scoreFeatures(
  m: InstructionModel,
  f: ArrayLike<number>,
  projection: number | undefined,
): InstructionScore {
  const contributions = new Map<string, number>();
  let z = m.bias;
  contributions.set('bias', m.bias);
  for (let i = 0; i < m.weights.length; i++) {
    const c = (m.weights[i] as number) * (f[i] as number);
    z += c;
    contributions.set(m.features[i] as string, c);
  }
  if (projection !== undefined) {
    const c = m.directionWeight * m.directionScale * projection;
    z += c;
    contributions.set(EMBEDDING_TERM, c);
  }
  return { score: z, contributions, embedded: projection !== undefined };
}

const LABELS: ReadonlyMap<string, string> = new Map<string, string>([
  ...INSTRUCTION_FEATURES.map(([k, l]) => [k, l] as [string, string]),
  [EMBEDDING_TERM, EMBEDDING_LABEL],
]);

/** The terms that pushed the score up most, as `name (+c)`; at most `k`. */
export function firedTerms(
  s: InstructionScore,
  k = 3,
): { name: string; label: string; contribution: number }[] {
  return [...s.contributions]
    .filter(([name, c]) => name !== 'bias' && c > 0.05)
    .sort((x, y) => y[1] - x[1])
    .slice(0, k)
    .map(([name, c]) => ({ name, label: LABELS.get(name) ?? name, contribution: c }));
}

/**
 * The instruction screen under one model. `detect` compares the score with a threshold the
 * caller chose for the write's tier (see `memory/detect/instruction-tiers`).
 */
export class InstructionScreen {
  readonly model: InstructionModel;

  constructor(model: InstructionModel) {
    if (
      model.features.length !== N ||
      model.features.some((f, i) => f !== INSTRUCTION_FEATURES[i]?.[0])
    )
      throw new TypeError('instruction model features do not match this build');
    if (model.weights.length !== N)
      throw new TypeError('instruction model weights do not match its features');
    this.model = model;
  }

  score(text: string, vec?: Float32Array): InstructionScore {
    return scoreFeatures(
      this.model,
      instructionFeatures(text),
      directionProjection(this.model, vec),
    );
  }

  /** Flag iff score > threshold; the reason names the terms that fired (no content). */
  detect(text: string, threshold: number, vec?: Float32Array, context = ''): Finding {
    if (!Number.isFinite(threshold)) return abstain('instruction', `not screened${context}`);
    const s = this.score(text, vec);
    const flagged = s.score > threshold;
    const terms = firedTerms(s);
    const why =
      terms.length === 0
        ? 'no instruction cue'
        : terms.map((t) => `${t.name}: ${t.label} (+${t.contribution.toFixed(2)})`).join('; ');
    const head = flagged ? 'instruction, not a fact' : 'reads as a fact';
    return finding(
      'instruction',
      s.score,
      threshold,
      `${head} (score ${s.score.toFixed(2)} ${flagged ? '>' : '≤'} ${threshold.toFixed(2)}${context}${s.embedded ? '' : ', no vector: features only'}): ${why}`,
    );
  }
}
