/**
 * @module memory/detect/proactive-tiers
 * Per-tier κ of the proactive probes on the write path (issue 22 follow-up, ADR 0052). The
 * probes measure how close a write sits to sixteen sensitive questions (payments, credentials,
 * account recovery, …) against the principal's own memories (τ = mean + κσ). A legitimate
 * payment e-mail, an address or a bank detail sits there too: at one κ for every tier the
 * default stack held 2.4 % of the public benign texts (BIPIA's e-mails) on top of the
 * instruction screen, and a user's own correction of their bank account would be held as well.
 * A poison must make the agent do something — send the login details, read out the
 * passwords, transfer to this IBAN — so even when it stays below the instruction screen's hold
 * threshold it does not read as a plain statement; the benign e-mails do (instruction log-odds
 * −5.5 to −1.4 where the project's own AgentPoison / MINJA / InjecMEM poisons score −2.1 and
 * up). So on the write path the probes are corroborated by the screen, per tier:
 *
 * - EXTERNAL_WEB / EXTERNAL_TOOL: the probes hold at κ 4 (ADR 0016) when the instruction
 *   screen's score is above −2.5. On a tuning split of the public injection corpora
 *   (`memwarden eval injections`, table "probes per tier") the lowest floor within the 2 %
 *   target is −3.75 for an established principal; −2.5 leaves room for texts not seen, and
 *   stays below the project's own poisons (−2.1 and up). Where the screen is off, the probes
 *   hold alone (fail closed);
 * - USER_OBSERVED and USER_VERIFIED: the probes never hold (their score is still reported).
 *   On the tuning split the instruction screen alone already spends USER_OBSERVED's 0.5 %
 *   budget (user task prompts such as "pay the bill …" score high on both), so no floor
 *   below the screen's own threshold fits; and a write the user verified is the user's own
 *   statement: "my new account is …" belongs exactly where the probes look, and holding it
 *   would make a correction wait for a review. ADR 0053 measured USER_OBSERVED's (κ, floor)
 *   curve on the tuning folds: the probe-free stack holds 6 of 1,304 benign texts (0.0046) and
 *   every policy that gives back a MINJA poison adds a seventh (0.0054), a user's own request
 *   ("Please get me the link to reset my TechServices password …"), so the tier stays
 *   probe-free;
 * - OPERATOR writes are not screened at all.
 *
 * A deployment sets its own with `detection.config.proactive.tiers`; a `proactive.kappa` or
 * `proactive.threshold` given without `tiers` applies to every tier, uncorroborated, as before.
 */
import type { ScreenedTier } from '../../core/detect/index.js';
import type { SourceTier } from '../../core/trust.js';

/** How the probes hold one tier's writes. */
export interface ProactiveTier {
  /** τ = mean + κσ over the reference (`Infinity`: never holds). */
  readonly kappa: number;
  /**
   * The probes' flag counts only when the instruction screen's score (log-odds) is above this
   * (`-Infinity`: uncorroborated).
   */
  readonly floor: number;
}

/** The shipped policy per tier (see the module comment; figures in ADRs 0052 and 0053). */
export const DEFAULT_PROACTIVE_TIERS: Readonly<Record<ScreenedTier, ProactiveTier>> = {
  EXTERNAL_WEB: { kappa: 4, floor: -2.5 },
  EXTERNAL_TOOL: { kappa: 4, floor: -2.5 },
  USER_OBSERVED: { kappa: Number.POSITIVE_INFINITY, floor: Number.POSITIVE_INFINITY },
  USER_VERIFIED: { kappa: Number.POSITIVE_INFINITY, floor: Number.POSITIVE_INFINITY },
};

export interface ProactiveTierConfig {
  /** One κ for every tier, uncorroborated (the pre-ADR-0052 setting). */
  readonly kappa?: number;
  /** A fixed τ for every tier, uncorroborated. */
  readonly threshold?: number;
  /** Policy per tier (overrides `kappa` and the defaults for the tiers it names). */
  readonly tiers?: Partial<Record<ScreenedTier, Partial<ProactiveTier>>>;
}

/**
 * The policy each tier's writes are held at. `undefined` for a tier: the detector's own τ,
 * uncorroborated (a fixed `threshold`, or one `kappa` configured for all tiers; OPERATOR).
 */
export function proactiveTiers(
  c: ProactiveTierConfig = {},
): Readonly<Record<SourceTier, ProactiveTier | undefined>> {
  const own = c.threshold !== undefined || c.kappa !== undefined;
  const at = (t: ScreenedTier): ProactiveTier | undefined => {
    const set = c.tiers?.[t];
    const base: ProactiveTier | undefined = own ? undefined : DEFAULT_PROACTIVE_TIERS[t];
    if (set === undefined) return base;
    return {
      kappa: set.kappa ?? base?.kappa ?? c.kappa ?? DEFAULT_PROACTIVE_TIERS[t].kappa,
      floor: set.floor ?? base?.floor ?? Number.NEGATIVE_INFINITY,
    };
  };
  return {
    OPERATOR: undefined,
    USER_VERIFIED: at('USER_VERIFIED'),
    USER_OBSERVED: at('USER_OBSERVED'),
    EXTERNAL_TOOL: at('EXTERNAL_TOOL'),
    EXTERNAL_WEB: at('EXTERNAL_WEB'),
  };
}
