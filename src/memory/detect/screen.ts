/**
 * @module memory/detect/screen
 * Write-path screening (article Pattern 3): instruction, role-claim and delimiter markers and
 * length limits. A finding holds the write for review; it never silently drops it. The
 * detectors of issue 7 (MemSAD and companions) plug in through the same `WriteScreen` shape.
 */
import type { SourceTier } from '../../core/trust.js';

export interface ScreenFinding {
  /** Stable reason label (also the `memory_writes_rejected_total{reason}` label). */
  readonly reason: string;
  readonly detail: string;
}

export interface WriteScreen {
  screen(content: string, tier: SourceTier): ScreenFinding[];
}

/** The article's INSTRUCTION_MARKERS, matched case-insensitively. */
export const INSTRUCTION_MARKERS = [
  'ignore previous',
  'ignore all previous',
  'disregard',
  'system:',
  'admin:',
  'you are now',
  'your new task',
  'from now on',
  'new instruction',
  '<|system|>',
  '[system]',
] as const;

const ROLE_CLAIM =
  /\b(i am|this is) (the |your )?(system|administrator|admin|developer|operator)\b/i;
const DELIMITER = /<\|?(im_start|im_end|system|assistant|user)\|?>|\[\/?INST\]|```system/i;

/**
 * Marker screen. Trust-aware: the user's own verified statements are not screened for
 * markers (a user may discuss "system prompts"), only for length; observed and external
 * content is.
 */
export class MarkerScreen implements WriteScreen {
  constructor(private readonly maxFactChars = 2_000) {}

  screen(content: string, tier: SourceTier): ScreenFinding[] {
    const out: ScreenFinding[] = [];
    if (tier === 'OPERATOR' || tier === 'USER_VERIFIED') return out;
    const lowered = content.toLowerCase();
    for (const m of INSTRUCTION_MARKERS) {
      if (lowered.includes(m)) {
        out.push({ reason: 'instruction_marker', detail: m });
        break;
      }
    }
    if (ROLE_CLAIM.test(content))
      out.push({ reason: 'role_claim', detail: 'claims a privileged role' });
    if (DELIMITER.test(content))
      out.push({ reason: 'delimiter', detail: 'chat-template delimiter' });
    if (
      (tier === 'EXTERNAL_TOOL' || tier === 'EXTERNAL_WEB') &&
      content.length > this.maxFactChars
    ) {
      out.push({ reason: 'length', detail: `untrusted content over ${this.maxFactChars} chars` });
    }
    return out;
  }
}
