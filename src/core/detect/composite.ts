/**
 * @module core/detect/composite
 * The composite defence (MemSAD paper App. C, definitive specification): the logical
 * disjunction — an entry is rejected when any member detector flags it. Its FPR is at most
 * the sum of the members' FPRs. Score = number of members that flagged (threshold 0.5).
 */
import { type DetectorName, type Finding, finding } from './types.js';

/** Default members: watermark ∨ MemSAD ∨ MemSAD+ ∨ proactive ∨ validation. */
export const COMPOSITE_MEMBERS: readonly DetectorName[] = [
  'watermark',
  'memsad',
  'memsad_plus',
  'proactive',
  'validation',
];

export function composite(
  findings: readonly Finding[],
  members: readonly DetectorName[] = COMPOSITE_MEMBERS,
): Finding {
  const fired = findings
    .filter((f) => f.flagged && members.includes(f.detector))
    .map((f) => f.detector);
  return finding(
    'composite',
    fired.length,
    0.5,
    fired.length > 0 ? `flagged by ${fired.join(' ∨ ')}` : 'no member flagged',
  );
}
