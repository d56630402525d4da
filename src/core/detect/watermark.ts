/**
 * @module core/detect/watermark
 * Unigram green-list watermark (MemSAD paper §5, App. C; Zhao et al. 2024, Kirchenbauer et
 * al. 2023). The ingestion path marks every legitimate write; a write without the mark did not
 * come through ingestion (e.g. agent auto-storage, an injected entry) and is flagged.
 *
 * Text is not regenerated here, so the mark is carried by invisible carriers: after each word
 * the ingestion path appends one of 20 zero-width carriers (one or two of four zero-width
 * characters), chosen so that the token
 * (word ‖ carrier) falls in the keyed green list (fraction γ = ¼; a green carrier exists for all but 0.75²⁰ of words). Detection counts green tokens
 * g among T and computes z = (g − γT) / √(T·γ·(1 − γ)); flag when z < threshold
 * (default 4, as the paper; a fully green entry reaches it at 6 words, shorter entries
 * abstain). Unmarked text has z ≈ 0.
 *
 * The green list is a keyed 32-bit mix (fast, not a MAC): it resists guessing, not an
 * attacker with a detection oracle. Stripping carriers (as auto-storage would) removes the
 * mark — which is exactly the "fails silently under auto-storage" property of §6.3.
 */
import { type Finding, abstain, finding } from './types.js';

const ZW = ['\u200b', '\u200c', '\u200d', '\u2060'] as const;
/** 20 carriers: every 1- and 2-character sequence of the four zero-width characters. */
const CARRIERS: readonly string[] = [...ZW, ...ZW.flatMap((a) => ZW.map((b) => a + b))];
// Alternations, not character classes: U+200D (a joiner) in a class is lint-flagged as misleading.
const ZW_ALT = '\\u200b|\\u200c|\\u200d|\\u2060';
const CARRIER_RE = new RegExp(`(?:${ZW_ALT})`);
const CARRIER_ALL_RE = new RegExp(`(?:${ZW_ALT})`, 'g');
const TOKEN_RE = new RegExp(`((?:(?!${ZW_ALT})\\S)+)((?:${ZW_ALT}){0,2})`, 'gu');

export interface WatermarkOptions {
  /** Secret key material (any string; keep it out of logs). */
  readonly key: string;
  /** Green fraction γ (default 0.25). */
  readonly gamma?: number;
  /** z-score below which an entry is flagged as unwatermarked (default 4). */
  readonly threshold?: number;
  /** Fewer tokens than this cannot carry a significant mark: abstain (default 6). */
  readonly minTokens?: number;
}

function mix(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class Watermark {
  readonly gamma: number;
  readonly threshold: number;
  readonly minTokens: number;
  readonly #seed: number;

  constructor(o: WatermarkOptions) {
    this.gamma = o.gamma ?? 0.25;
    this.threshold = o.threshold ?? 4;
    this.minTokens = o.minTokens ?? 6;
    this.#seed = mix(0x9e3779b9, o.key);
  }

  #green(word: string, carrier: string): boolean {
    return mix(this.#seed, `${word}\u0000${carrier}`) / 4294967296 < this.gamma;
  }

  /** Mark `text` (the ingestion path): a green carrier after each word where one exists. */
  mark(text: string): string {
    const plain = Watermark.strip(text);
    return plain.replace(/[^\s]+/gu, (w) => {
      for (const c of CARRIERS) if (this.#green(w, c)) return w + c;
      return w;
    });
  }

  /** Remove carriers (what is embedded and what a reader sees). */
  static strip(text: string): string {
    return CARRIER_RE.test(text) ? text.replace(CARRIER_ALL_RE, '') : text;
  }

  /** z-score of the green-token count. */
  zScore(text: string): { z: number; tokens: number } {
    let t = 0;
    let g = 0;
    for (const m of text.matchAll(TOKEN_RE)) {
      t++;
      if (this.#green(m[1] ?? '', m[2] ?? '')) g++;
    }
    if (t === 0) return { z: 0, tokens: 0 };
    const z = (g - this.gamma * t) / Math.sqrt(t * this.gamma * (1 - this.gamma));
    return { z, tokens: t };
  }

  /** Flag when the mark is missing. Score is −z so that higher = more suspicious. */
  detect(text: string): Finding {
    const { z, tokens } = this.zScore(text);
    if (tokens < this.minTokens) return abstain('watermark', `only ${tokens} tokens`);
    return finding(
      'watermark',
      -z,
      -this.threshold,
      z < this.threshold
        ? `watermark z ${z.toFixed(2)} < ${this.threshold}`
        : `watermark z ${z.toFixed(2)}`,
    );
  }
}
