/**
 * @module memory/graph/extract
 * Entity and triple extraction from passages (HippoRAG2's OpenIE stage): through the LLM
 * provider port with a validated JSON answer, or deterministically for tests and the eval.
 * A malformed model answer is `LLM_MALFORMED` (ports/llm error contract): callers fail closed
 * and the passage is indexed without derived structure.
 */
import { MemwardenError } from '../../core/errors.js';
import type { LlmProvider } from '../../ports/llm.js';

export interface Extraction {
  readonly entities: readonly string[];
  readonly triples: readonly (readonly [string, string, string])[];
}

export interface Extractor {
  extract(passage: string): Promise<Extraction>;
}

const MAX_ITEMS = 128;

/** Validate an untrusted extraction object (from a model or a caller). */
export function validateExtraction(v: unknown): Extraction | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  const okName = (x: unknown): x is string =>
    typeof x === 'string' && x.trim().length > 0 && x.length <= 256;
  if (!Array.isArray(o.entities) || o.entities.length > MAX_ITEMS || !o.entities.every(okName))
    return undefined;
  const triples: [string, string, string][] = [];
  const raw = o.triples ?? [];
  if (!Array.isArray(raw) || raw.length > MAX_ITEMS) return undefined;
  for (const t of raw) {
    if (!Array.isArray(t) || t.length !== 3 || !t.every(okName)) return undefined;
    const [s0, p0, o0] = t as [string, string, string];
    triples.push([s0.trim(), p0.trim(), o0.trim()]);
  }
  const entities = [
    ...new Set([...o.entities.map((e) => e.trim()), ...triples.flatMap((t) => [t[0], t[2]])]),
  ];
  return { entities, triples };
}

const SYSTEM = [
  'You are an open information extraction system.',
  'Given a passage, return JSON {"entities": [string], "triples": [[subject, predicate, object]]}.',
  'Entities are named people, places, organisations, works and events, written as in the passage.',
  'Every triple subject and object must be one of the entities. Return only the JSON object.',
].join(' ');

/** OpenIE through an LLM (temperature 0, JSON mode), validated. */
export class LlmExtractor implements Extractor {
  constructor(private readonly llm: LlmProvider) {}

  async extract(passage: string): Promise<Extraction> {
    const res = await this.llm.generate({
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: passage },
      ],
      temperature: 0,
      json: true,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch (e) {
      throw new MemwardenError('LLM_MALFORMED', 'extraction is not JSON', { cause: e });
    }
    const x = validateExtraction(parsed);
    if (x === undefined)
      throw new MemwardenError('LLM_MALFORMED', 'extraction does not match the schema');
    return x;
  }
}

const CAP_RUN =
  /\b(\p{Lu}[\p{L}\p{N}'’.-]*(?:\s+(?:of|the|de|van|von|and)?\s*\p{Lu}[\p{L}\p{N}'’.-]*)*)/gu;
const STOP = new Set([
  'The',
  'A',
  'An',
  'In',
  'On',
  'At',
  'He',
  'She',
  'They',
  'It',
  'His',
  'Her',
  'Their',
  'This',
  'That',
  'Session',
  'Where',
  'Who',
  'What',
  'Which',
  'When',
  'I',
  'We',
  'You',
]);

/**
 * A deterministic extractor: entities are a gazetteer's names found in the passage (longest
 * first), or, without a gazetteer, runs of capitalised words; triples join consecutive entities
 * within a sentence by the words between them.
 */
export class DeterministicExtractor implements Extractor {
  private readonly gazetteer: readonly string[] | undefined;
  constructor(gazetteer?: readonly string[]) {
    this.gazetteer =
      gazetteer === undefined
        ? undefined
        : [...gazetteer].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  }

  async extract(passage: string): Promise<Extraction> {
    return this.extractSync(passage);
  }

  extractSync(passage: string): Extraction {
    const entities: string[] = [];
    const triples: [string, string, string][] = [];
    for (const sentence of passage.split(/(?<=[.!?])\s+/)) {
      const found = this.find(sentence);
      for (const f of found) if (!entities.includes(f.name)) entities.push(f.name);
      for (let i = 0; i + 1 < found.length; i++) {
        const a = found[i]!;
        const b = found[i + 1]!;
        const pred = sentence
          .slice(a.end, b.start)
          .replace(/[^\p{L}\p{N}\s]/gu, ' ')
          .trim()
          .replace(/\s+/g, ' ');
        if (pred.length > 0 && pred.length <= 64 && a.name !== b.name)
          triples.push([a.name, pred, b.name]);
      }
    }
    return { entities, triples };
  }

  private find(s: string): { name: string; start: number; end: number }[] {
    const out: { name: string; start: number; end: number }[] = [];
    if (this.gazetteer !== undefined) {
      const taken = new Array<boolean>(s.length).fill(false);
      const lower = s.toLowerCase();
      for (const name of this.gazetteer) {
        const n = name.toLowerCase();
        let from = 0;
        for (;;) {
          const i = lower.indexOf(n, from);
          if (i < 0) break;
          from = i + n.length;
          const before = i === 0 ? ' ' : lower[i - 1]!;
          const after = from >= lower.length ? ' ' : lower[from]!;
          if (/[\p{L}\p{N}]/u.test(before) || /[\p{L}\p{N}]/u.test(after)) continue;
          if (taken.slice(i, from).some(Boolean)) continue;
          for (let j = i; j < from; j++) taken[j] = true;
          out.push({ name, start: i, end: from });
        }
      }
    } else {
      for (const m of s.matchAll(CAP_RUN)) {
        const name = m[1]!.replace(/[.’']+$/u, '');
        if (STOP.has(name) || name.length < 2) continue;
        out.push({ name, start: m.index, end: m.index + m[1]!.length });
      }
    }
    return out.sort((a, b) => a.start - b.start);
  }
}
