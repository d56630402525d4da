/**
 * The deterministic consolidation rule (`core/text/relate`) on the cases its module comment
 * names — including the early answer for texts with no shared first word (ADR 0081), which
 * must not pre-empt the negation rule ("No cats live here" corrects "cats live here").
 */
import { describe, expect, it } from 'vitest';
import { relate } from '../../../src/core/text/index.js';

describe('relate', () => {
  it.each([
    ['Alice is allergic to peanuts', 'Alice is allergic to peanuts', 'same'],
    ['Alice is allergic to peanuts', 'Alice is not allergic to peanuts', 'update'],
    ["Alice isn't allergic to peanuts", 'Alice is allergic to peanuts', 'update'],
    ['cats live here', 'no cats live here', 'update'],
    // "does" must not fold to "doe" before the auxiliaries a negation brings are dropped.
    ['Alice likes tea', 'Alice does not like tea', 'update'],
    ["Alice doesn't like tea", 'Alice likes tea', 'update'],
    ['Bob did not call', 'Bob calls', 'update'],
    ['The meeting is at 10am', 'The meeting is at 11am', 'update'],
    ['Invoice 1001 is due', 'Invoice 1002 is due', 'distinct'],
    ['Bob lives in Paris', 'Bob lives in Berlin', 'update'],
    ['Bob likes apples', 'Bob likes pears', 'distinct'],
    ['Ana drinks tea', 'Ben plays chess', 'distinct'],
    ['The car is red', 'The car is red and fast and very old and loud', 'distinct'],
    ['', 'anything', 'distinct'],
  ] as const)('%s → %s: %s', (prev, next, want) => {
    expect(relate(prev, next)).toBe(want);
  });
});
