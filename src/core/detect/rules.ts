/**
 * @module core/detect/rules
 * Pattern detectors over strings:
 * - `validate` — rule-based write validation (MemSAD paper §5 "Validation"; article
 *   Pattern 3's markers): each rule that matches adds one to the score; flag at ≥ 1 rule.
 * - `injectionRisk` — read-time injection-risk scoring of retrieved content (article
 *   Pattern 6), trust-aware: a user's own verified content may mention "system prompt", so
 *   trusted tiers are flagged only above `trustedAllowance` matches (article: risk ≤ 2 kept
 *   for USER_VERIFIED and above), untrusted tiers at the first match.
 * Regexes are linear-time (no nested quantifiers) and run on at most `maxChars` characters,
 * so attacker-sized input cannot stall the screen.
 */
import type { SourceTier } from '../trust.js';
import { type Finding, finding } from './types.js';

export interface Rule {
  readonly name: string;
  readonly re: RegExp;
}

/** Write-time validation rules (instructions, authority claims, persistence, exfiltration). */
export const VALIDATION_RULES: readonly Rule[] = [
  {
    name: 'ignore_instructions',
    re: /\b(ignore|disregard|forget)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|context)\b/i,
  },
  {
    name: 'role_reassignment',
    re: /\byou are (now|actually|no longer)\b|\byour new (task|role|instructions?|goal)\b|\bact as (the |an? )?(admin|system|developer|root)\b/i,
  },
  {
    name: 'system_marker',
    re: /(^|\s)(system|admin|developer)\s*:|<\|?(system|im_start|im_end|assistant)\|?>|\[\/?(system|INST)\]/i,
  },
  {
    name: 'persistence_directive',
    re: /\b(from now on|in (all )?future (sessions|conversations|answers)|always (respond|answer|reply|recommend|say|use|send|route|forward)|whenever (you|the user|anyone) (ask|asks|see|sees|mention|mentions))\b/i,
  },
  {
    name: 'authority_claim',
    re: /\b(highest priority|overrides? (all|any|previous|other)|authoritative (source|instruction)|mandatory (policy|instruction)|official (system )?(policy|directive)|verified by (the )?(admin|system|security team))\b/i,
  },
  {
    name: 'exfiltration',
    re: /\b(send|forward|upload|post|email|transfer)\b[^.\n]{0,60}\b(password|credentials?|api[ _-]?keys?|tokens?|secrets?|ssn|card numbers?|private keys?)\b/i,
  },
  {
    name: 'redirect',
    re: /\b(visit|go to|navigate to|download from|click)\b[^.\n]{0,30}(https?:\/\/|www\.)/i,
  },
  {
    name: 'covert',
    re: /\b(do not (tell|inform|mention|reveal)|without (telling|informing|notifying)|keep (this|it) (secret|hidden))\b/i,
  },
];

/** Read-time patterns (article Pattern 6, plus the validation rules' strongest markers). */
export const INJECTION_PATTERNS: readonly Rule[] = [
  {
    name: 'ignore_instructions',
    re: /\bignore (all |previous |prior |the )?(instructions|prompts|rules)\b/i,
  },
  { name: 'role_reassignment', re: /\byou are (now|actually) an? /i },
  { name: 'system_prefix', re: /(^|\s)system:\s/i },
  { name: 'chat_delimiter', re: /<\|?(system|im_start|assistant)\|?>/i },
  { name: 'new_task', re: /\byour new (task|role|instructions?)\b/i },
  {
    name: 'persistence_directive',
    re: /\b(from now on|in (all )?future (sessions|conversations))\b/i,
  },
  {
    name: 'exfiltration',
    re: /\b(send|forward|upload|email)\b[^.\n]{0,60}\b(password|credentials?|api[ _-]?keys?|secrets?)\b/i,
  },
];

export interface RuleOptions {
  readonly maxChars?: number;
}

function matches(rules: readonly Rule[], text: string, maxChars: number): string[] {
  const t = text.length > maxChars ? text.slice(0, maxChars) : text;
  const out: string[] = [];
  for (const r of rules) if (r.re.test(t)) out.push(r.name);
  return out;
}

/** Rule-based validation of a candidate write. */
export function validate(text: string, o: RuleOptions & { threshold?: number } = {}): Finding {
  const hit = matches(VALIDATION_RULES, text, o.maxChars ?? 20_000);
  const th = o.threshold ?? 0.5;
  return finding(
    'validation',
    hit.length,
    th,
    hit.length > 0 ? `rules: ${hit.join(', ')}` : 'no rule matched',
  );
}

export interface InjectionRiskOptions extends RuleOptions {
  /** Matches tolerated for OPERATOR / USER_VERIFIED content (default 2, article Pattern 6). */
  readonly trustedAllowance?: number;
  /** Matches tolerated for USER_OBSERVED content (default 0). */
  readonly observedAllowance?: number;
}

/** Injection-risk score of retrieved content, trust-aware. */
export function injectionRisk(
  text: string,
  tier: SourceTier,
  o: InjectionRiskOptions = {},
): Finding {
  const hit = matches(INJECTION_PATTERNS, text, o.maxChars ?? 20_000);
  const allowance =
    tier === 'OPERATOR' || tier === 'USER_VERIFIED'
      ? (o.trustedAllowance ?? 2)
      : tier === 'USER_OBSERVED'
        ? (o.observedAllowance ?? 0)
        : 0;
  return finding(
    'injection_risk',
    hit.length,
    allowance,
    hit.length > 0
      ? `patterns: ${hit.join(', ')} (tier ${tier} allows ${allowance})`
      : 'no pattern matched',
  );
}
