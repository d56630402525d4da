/**
 * @module eval/locomo/data
 * LoCoMo conversations (Maharana et al. 2024) as the evaluation reads them: each conversation's
 * sessions of dialogue turns (`dia_id`, speaker, text, an optional image caption) with the
 * session's date, and its questions with their evidence turns and category (1 multi-hop,
 * 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). The file is the dataset's own JSON
 * (`locomo10.json` shape); the data itself is CC BY-NC and is never shipped with memwarden.
 */
import { readFileSync } from 'node:fs';
import { MemwardenError } from '../../core/errors.js';

export interface Turn {
  readonly diaId: string;
  readonly session: number;
  readonly speaker: string;
  /** The turn as it is remembered: its text, and the caption of an image it shares. */
  readonly text: string;
  /** The session's date (ISO 8601), when parseable. */
  readonly at?: string;
}

export interface Question {
  readonly question: string;
  readonly category: number;
  /** The `dia_id`s that support the answer. */
  readonly evidence: readonly string[];
}

export interface Conversation {
  readonly id: string;
  readonly turns: readonly Turn[];
  readonly questions: readonly Question[];
}

export const CATEGORY_NAMES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "1:56 pm on 8 May, 2023" → ISO 8601 (UTC), or undefined. */
export function parseSessionDate(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s*(\d{4})/i.exec(s);
  if (m === null) return undefined;
  const month = MONTHS.indexOf((m[5] as string).toLowerCase());
  if (month < 0) return undefined;
  let hour = Number(m[1]) % 12;
  if ((m[3] as string).toLowerCase() === 'pm') hour += 12;
  const d = new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

const bad = (what: string): never => {
  throw new MemwardenError('INPUT_INVALID', `not a LoCoMo file: ${what}`);
};

/** Evidence ids as given, split where the dataset joins several in one string. */
function evidenceIds(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((e) =>
    typeof e === 'string' ? e.split(/[;,\s]+/).filter((x) => /^D\d+:\d+$/.test(x)) : [],
  );
}

/** Parse the dataset's JSON (an array of conversations). */
export function parseLocomo(json: unknown): Conversation[] {
  if (!Array.isArray(json)) bad('expected an array of conversations');
  return (json as unknown[]).map((c, ci) => {
    if (typeof c !== 'object' || c === null) return bad(`conversation ${ci} is not an object`);
    const conv = (c as { conversation?: unknown }).conversation;
    if (typeof conv !== 'object' || conv === null) return bad(`conversation ${ci} has no sessions`);
    const sessions = conv as Record<string, unknown>;
    const turns: Turn[] = [];
    for (let s = 1; Array.isArray(sessions[`session_${s}`]); s++) {
      const at = parseSessionDate(sessions[`session_${s}_date_time`]);
      for (const t of sessions[`session_${s}`] as unknown[]) {
        const r = t as {
          dia_id?: unknown;
          speaker?: unknown;
          text?: unknown;
          blip_caption?: unknown;
        };
        if (
          typeof r.dia_id !== 'string' ||
          typeof r.speaker !== 'string' ||
          typeof r.text !== 'string'
        )
          bad(`a turn of session ${s} lacks dia_id, speaker or text`);
        const caption =
          typeof r.blip_caption === 'string' && r.blip_caption !== ''
            ? ` [shares ${r.blip_caption}]`
            : '';
        const text = `${r.text as string}${caption}`.trim();
        if (text === '') continue;
        turns.push({
          diaId: r.dia_id as string,
          session: s,
          speaker: r.speaker as string,
          text,
          ...(at === undefined ? {} : { at }),
        });
      }
    }
    const qa = (c as { qa?: unknown }).qa;
    const questions: Question[] = (Array.isArray(qa) ? qa : []).flatMap((q: unknown) => {
      const r = q as { question?: unknown; category?: unknown; evidence?: unknown };
      const evidence = evidenceIds(r.evidence);
      if (typeof r.question !== 'string' || r.question === '' || evidence.length === 0) return [];
      return [{ question: r.question, category: Number(r.category), evidence }];
    });
    const id = (c as { sample_id?: unknown }).sample_id;
    return { id: typeof id === 'string' ? id : `conversation-${ci}`, turns, questions };
  });
}

export function loadLocomo(path: string): Conversation[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', `cannot read ${path}: ${(e as Error).message}`);
  }
  return parseLocomo(JSON.parse(text) as unknown);
}
