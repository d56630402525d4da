/**
 * @module core/render/sentinel
 * Tagged context segments (MemLineage §3.6 step 4) and their parser (read by the gate, §3.7).
 *
 *     [BEGIN MEMORY entry_id=<uuid> trust=<LABEL> tier=<TIER> authority=<A> seal=<hex>]
 *     …content…
 *     [END MEMORY seal=<hex>]
 *
 * Stored content cannot forge a segment, for two independent reasons:
 * 1. `escapeContent` neutralises every sentinel lookalike in content (`[BEGIN MEMORY`,
 *    `[END MEMORY`, case- and whitespace-insensitively) by replacing the bracket with
 *    U+FF3B, so a lookalike never parses; and
 * 2. each render carries a fresh random `seal` the content never saw; the parser only
 *    accepts segments whose seal matches the one the renderer returned.
 * The gate reads these segments, never the model's own account of what it read.
 */
import { MemwardenError } from '../errors.js';
import { type Authority, type SourceTier, type TrustLabel, isSourceTier, isTrustLabel } from '../trust.js';

/** One memory to render. */
export interface SegmentInput {
  readonly id: string;
  readonly label: TrustLabel;
  readonly tier: SourceTier;
  readonly authority: Authority;
  readonly content: string;
}

/** A segment recovered from a rendered context. */
export interface ParsedSegment extends SegmentInput {
  /** Character offsets of the whole segment in the context. */
  readonly start: number;
  readonly end: number;
}

const LOOKALIKE = /\[(\s*)(begin|end)(\s+)memory/gi;
const SEAL_RE = /^[0-9a-f]{32}$/;
const ID_RE = /^[0-9a-f-]{36}$/;

/** Replace the bracket of every sentinel lookalike so it can never parse as a sentinel. */
export function escapeContent(content: string): string {
  return content.replace(LOOKALIKE, (_m, s1: string, word: string, s2: string) => `\uFF3B${s1}${word}${s2}memory`);
}

/** Render segments under `seal` (32 lowercase hex chars from a CSPRNG, fresh per context). */
export function renderSegments(segments: readonly SegmentInput[], seal: string): string {
  if (!SEAL_RE.test(seal)) throw new MemwardenError('INPUT_INVALID', 'seal must be 32 lowercase hex chars');
  return segments
    .map(
      (s) =>
        `[BEGIN MEMORY entry_id=${s.id} trust=${s.label} tier=${s.tier} authority=${s.authority} seal=${seal}]\n` +
        `${escapeContent(s.content)}\n[END MEMORY seal=${seal}]`,
    )
    .join('\n');
}

const BEGIN_RE =
  /\[BEGIN MEMORY entry_id=([^\s\]]+) trust=([A-Z_]+) tier=([A-Z_]+) authority=(BOTTOM|U|A|T) seal=([0-9a-f]{32})\]\n/g;

/**
 * Parse the segments of `context` sealed with `seal`. Segments with another seal, malformed
 * headers or no matching end marker are ignored (they were not rendered by this memwarden).
 */
export function parseSegments(context: string, seal: string): ParsedSegment[] {
  if (!SEAL_RE.test(seal)) return [];
  const out: ParsedSegment[] = [];
  const end = `\n[END MEMORY seal=${seal}]`;
  BEGIN_RE.lastIndex = 0;
  for (let m = BEGIN_RE.exec(context); m !== null; m = BEGIN_RE.exec(context)) {
    const [header, id, label, tier, authority, s] = m as unknown as [string, string, string, string, string, string];
    if (s !== seal || !ID_RE.test(id) || !isTrustLabel(label) || !isSourceTier(tier)) continue;
    const bodyStart = m.index + header.length;
    const close = context.indexOf(end, bodyStart);
    if (close < 0) continue;
    out.push({
      id,
      label,
      tier,
      authority: authority as Authority,
      content: context.slice(bodyStart, close),
      start: m.index,
      end: close + end.length,
    });
    BEGIN_RE.lastIndex = close + end.length;
  }
  return out;
}
