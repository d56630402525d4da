/**
 * The `Ledger` behind a `Memory` a test built itself. `Memory.ledger` is a frozen read view
 * (ADR 0029): tests that audit the store, read its rows or count re-signatures keep the ledger
 * they constructed the memory with, here.
 */
import type { Ledger } from '../../src/memory/log/ledger.js';
import type { Memory } from '../../src/memory/memory.js';

const ledgers = new WeakMap<Memory, Ledger>();

/** Remember `ledger` as the one `mem` was built on; returns `mem`. */
export function keepLedger<M extends Memory>(mem: M, ledger: Ledger): M {
  ledgers.set(mem, ledger);
  return mem;
}

/** The ledger `mem` was built on (see {@link keepLedger}). */
export function ledgerOf(mem: Memory): Ledger {
  const l = ledgers.get(mem);
  if (l === undefined) throw new Error('no ledger kept for this memory');
  return l;
}
