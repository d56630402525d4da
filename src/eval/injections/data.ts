/**
 * @module eval/injections/data
 * The instruction screen's training data, assembled the same way for the shipped weights
 * (scripts/train-instruction-screen.mjs) and for every cross-validation fold of
 * `memwarden eval injections`: the redistributable corpus rows (corpus.ts `trainable`), the
 * project's hand-written statements and the generic benign reference as negatives, and the
 * hand-written user requests plus the reference's task reminders as the USER_* tiers'
 * calibration set.
 */
import {
  GENERIC_BENIGN_REFERENCE,
  GENERIC_TASK_REMINDERS,
} from '../../memory/detect/benign-reference.js';
import type { Embedder } from '../../ports/embedder.js';
import { type InjectionRow, groupInfo, groupOf, trainable } from './corpus.js';
import { HANDWRITTEN_STATEMENTS, HANDWRITTEN_USER_REQUESTS } from './handwritten.js';
import type { Example } from './train.js';

export interface TrainingData {
  readonly examples: Example[];
  readonly userRequests: { text: string; vec: Float32Array }[];
  /** Examples per group with its licence (for the generated file's header). */
  readonly counts: Record<string, { n: number; licence: string }>;
  /** Attribution lines for the shipped weights. */
  readonly sources: string[];
}

/** The project's own texts: statements (negatives) and user requests (USER_* calibration). */
export function ownTexts(): { statements: string[]; userRequests: string[] } {
  const reminders = new Set(GENERIC_TASK_REMINDERS);
  return {
    statements: [
      ...HANDWRITTEN_STATEMENTS,
      ...GENERIC_BENIGN_REFERENCE.filter((t) => !reminders.has(t)),
    ],
    userRequests: [...HANDWRITTEN_USER_REQUESTS, ...GENERIC_TASK_REMINDERS],
  };
}

const ATTRIBUTION: Record<string, string> = {
  bipia_text:
    'microsoft/BIPIA @ 1a2a91d (MIT, Copyright (c) Microsoft Corporation): text attack instructions',
  bipia_code:
    'microsoft/BIPIA @ 1a2a91d (MIT, Copyright (c) Microsoft Corporation): code attack instructions',
  bipia_email:
    'microsoft/BIPIA @ 1a2a91d (MIT, Copyright (c) Microsoft Corporation): EmailQA context e-mails',
  asb: 'agiresearch/ASB via Zhang-Henry/AIOS_agent @ b38a3d2 (MIT): attacker instructions',
  injecagent: 'uiuc-kang-lab/InjecAgent via the ASB copy (MIT): direct-harm attacker instructions',
  agentdojo_goal: 'ethz-spylab/agentdojo v0.1.15 (MIT): injection goals',
  agentdojo_env: 'ethz-spylab/agentdojo v0.1.15 (MIT): environment texts',
  poisonedrag:
    'sleeepeer/PoisonedRAG (MIT, Copyright (c) 2024 Runpeng Geng): adversarial passages, as fact-form negatives',
};

/** Embed in batches through `embedder` (the eval's disk cache makes reruns free). */
export async function embedAll(
  embedder: Embedder,
  texts: readonly string[],
  log?: (m: string) => void,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const B = 64;
  for (let i = 0; i < texts.length; i += B) {
    out.push(...(await embedder.embed(texts.slice(i, i + B) as string[])));
    if (log !== undefined && (i / B) % 10 === 9)
      log(`embedded ${Math.min(texts.length, i + B)}/${texts.length}`);
  }
  return out;
}

/**
 * Training data from corpus rows. `exclude` names groups left out (leave-one-source-out);
 * `keep` filters rows further (e.g. a fold of a random split).
 */
export async function trainingData(
  rows: readonly InjectionRow[],
  embedder: Embedder,
  log?: (m: string) => void,
  o: { exclude?: ReadonlySet<string>; keep?: (r: InjectionRow) => boolean } = {},
): Promise<TrainingData> {
  const use = rows.filter((r) => {
    const g = groupOf(r.category);
    return trainable(g) && o.exclude?.has(g) !== true && (o.keep === undefined || o.keep(r));
  });
  const own = ownTexts();
  const vecs = await embedAll(
    embedder,
    [...use.map((r) => r.text), ...own.statements, ...own.userRequests],
    log,
  );
  const examples: Example[] = [];
  const counts: Record<string, { n: number; licence: string }> = {};
  use.forEach((r, i) => {
    const g = groupOf(r.category);
    const info = groupInfo(g);
    examples.push({
      text: r.text,
      vec: vecs[i] as Float32Array,
      y: info.role === 'instruction' ? 1 : 0,
    });
    const c = (counts[g] ??= { n: 0, licence: info.licence });
    c.n++;
  });
  own.statements.forEach((t, j) => {
    examples.push({ text: t, vec: vecs[use.length + j] as Float32Array, y: 0 });
  });
  counts['own_statements'] = { n: own.statements.length, licence: 'Apache-2.0 (this project)' };
  const userRequests = own.userRequests.map((t, j) => ({
    text: t,
    vec: vecs[use.length + own.statements.length + j] as Float32Array,
  }));
  counts['own_user_requests (thresholds only)'] = {
    n: userRequests.length,
    licence: 'Apache-2.0 (this project)',
  };
  const sources = [
    ...Object.keys(counts)
      .filter((g) => ATTRIBUTION[g] !== undefined)
      .map((g) => ATTRIBUTION[g] as string),
    'memwarden (Apache-2.0): hand-written statements and user requests, the generic benign reference',
  ];
  return { examples, userRequests, counts, sources };
}
