/**
 * @module core/compare
 * Comparator terms for `Array.prototype.sort`.
 */

/**
 * The sign of `b − a` as −1, 0 or 1 — 0 also when either is NaN, as `b − a || …` treats a NaN
 * difference — so `descending(a, b) || …` orders exactly as `b − a || …` does. A comparator that
 * returns the difference returns a boxed double on every call the engine's sort makes; this
 * returns a small integer.
 */
export function descending(a: number, b: number): number {
  return b > a ? 1 : b < a ? -1 : 0;
}
