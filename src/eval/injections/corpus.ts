/**
 * @module eval/injections/corpus
 * The public injection corpora of issue 22 (`injections/dev.jsonl` in the eval data folder, one
 * `{id, text, label, source, category}` a line) sorted into the groups the screen is trained
 * and measured by, with each group's licence and its role:
 *
 * - `instruction`: instruction-type attacks (BIPIA text and code attacks, ASB, InjecAgent,
 *   AgentDojo injection goals): classifier positives;
 * - `statement`: benign texts in statement form that may be redistributed (BIPIA e-mails,
 *   AgentDojo environment texts) and PoisonedRAG's false facts, which are facts in form
 *   (misinformation, not instructions: reported apart, never counted as instructions):
 *   classifier negatives;
 * - `user_request`: AgentDojo's user task prompts — instructions in form, from the user; the
 *   dataset labels them benign, so they count as benign in every figure, but they train
 *   nothing (a classifier taught that instructions are facts learns nothing of use);
 * - `eval_only`: LoCoMo (CC BY-NC 4.0): measured on, never trained on.
 */
import { readFileSync } from 'node:fs';
import { MemwardenError } from '../../core/errors.js';

export interface InjectionRow {
  readonly id: string;
  readonly text: string;
  readonly label: 'attack' | 'benign';
  readonly source: string;
  readonly category: string;
}

export type Role = 'instruction' | 'statement' | 'user_request' | 'eval_only';

export interface Group {
  readonly name: string;
  readonly role: Role;
  readonly licence: string;
  /** False facts (PoisonedRAG): reported apart from the instruction-type attacks. */
  readonly falseFacts?: boolean;
}

export const GROUPS: readonly Group[] = [
  { name: 'bipia_text', role: 'instruction', licence: 'MIT' },
  { name: 'bipia_code', role: 'instruction', licence: 'MIT' },
  { name: 'asb', role: 'instruction', licence: 'MIT' },
  { name: 'injecagent', role: 'instruction', licence: 'MIT' },
  { name: 'agentdojo_goal', role: 'instruction', licence: 'MIT' },
  { name: 'bipia_email', role: 'statement', licence: 'MIT' },
  { name: 'agentdojo_env', role: 'statement', licence: 'MIT' },
  { name: 'poisonedrag', role: 'statement', licence: 'MIT', falseFacts: true },
  { name: 'agentdojo_user', role: 'user_request', licence: 'MIT' },
  { name: 'locomo', role: 'eval_only', licence: 'CC BY-NC 4.0' },
];

const BY_NAME = new Map(GROUPS.map((g) => [g.name, g]));

/** The group of a row, from its category (`other` when the corpus grows a new one). */
export function groupOf(category: string): string {
  const c = category;
  if (c.startsWith('bipia/text')) return 'bipia_text';
  if (c.startsWith('bipia/code')) return 'bipia_code';
  if (c.startsWith('bipia/email')) return 'bipia_email';
  if (c.startsWith('asb/')) return 'asb';
  if (c.startsWith('injecagent')) return 'injecagent';
  if (c.startsWith('agentdojo/') && c.includes('injection_goal')) return 'agentdojo_goal';
  if (c.startsWith('agentdojo/') && c.includes('user_task_prompt')) return 'agentdojo_user';
  if (c.startsWith('agentdojo/') && c.includes('environment_text')) return 'agentdojo_env';
  if (c.startsWith('poisonedrag')) return 'poisonedrag';
  if (c.startsWith('locomo')) return 'locomo';
  return 'other';
}

export function groupInfo(name: string): Group {
  return BY_NAME.get(name) ?? { name, role: 'eval_only', licence: 'unknown' };
}

/** A row may train weights we ship: its group is trainable and its licence allows it. */
export function trainable(name: string): boolean {
  const g = groupInfo(name);
  return (g.role === 'instruction' || g.role === 'statement') && g.licence === 'MIT';
}

/** Parse the corpus file; a bad line is a coded error naming the line. */
export function readInjections(path: string): InjectionRow[] {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', `cannot read the injection corpus at ${path}`, {
      cause: e,
    });
  }
  const out: InjectionRow[] = [];
  raw.split('\n').forEach((line, i) => {
    if (line.trim().length === 0) return;
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      throw new MemwardenError('INPUT_INVALID', `line ${i + 1} of ${path} is not JSON`);
    }
    const o = r as Partial<InjectionRow>;
    if (
      typeof o.text !== 'string' ||
      (o.label !== 'attack' && o.label !== 'benign') ||
      typeof o.category !== 'string'
    )
      throw new MemwardenError(
        'INPUT_INVALID',
        `line ${i + 1} of ${path} lacks text / label / category`,
      );
    out.push({
      id: typeof o.id === 'string' ? o.id : `line-${i + 1}`,
      text: o.text,
      label: o.label,
      source: typeof o.source === 'string' ? o.source : 'unknown',
      category: o.category,
    });
  });
  return out;
}
