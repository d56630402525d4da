/**
 * @module memory/read/observed-storage
 * A storage decorator that reports every committed change of what entry search may return —
 * new entries (`putEntry` / `putEntries`), `markDeleted`, `markSuperseded`, `extendExpiry` — to
 * a sink, AFTER the change is durable: a call outside a transaction is reported when it
 * resolves (each is its own atomic unit), a call inside `transaction(fn)` is buffered and the
 * buffer reported only when the transaction has committed (a rejected transaction rolled back,
 * and its buffer is dropped). Principal views (`asPrincipal`) and transaction views are
 * decorated too, so every path that writes through this object is seen; a nested transaction
 * joins its enclosing one (as every backend does) and so does its buffer. A failed call
 * changed nothing (the port's rule) and reports nothing.
 *
 * Used by the read model (`read-model.ts`): on a backend whose every write passes through this
 * process (ADR 0018), or — with the log follower (`follower.ts`, ADR 0037) reporting the
 * commits of other processes — on a shared server.
 */
import type { RootStorage, StorageBackend, StoredEntry } from '../../ports/storage.js';

/** One committed change of entry visibility, as the read model applies it. */
export type EntryChange =
  | { readonly op: 'put'; readonly entry: StoredEntry }
  | { readonly op: 'deleted'; readonly id: string }
  | { readonly op: 'superseded'; readonly id: string; readonly by: string }
  /** The expiry now in force (what `extendExpiry` returned; undefined: never expires). */
  | { readonly op: 'expiry'; readonly id: string; readonly expiresAtNs: bigint | undefined };

type Emit = (changes: readonly EntryChange[]) => void;

/**
 * The transactions through an observed storage that have not ended yet (each settles only after
 * its changes were reported), so a follower of the shared log can tell "committed here, about
 * to be reported" from "committed by another process" (ADR 0037).
 */
export class LocalCommits {
  /** Open transactions that hold the log head (their `lockLogHead` answered), by the size it had. */
  private readonly holding = new Map<Promise<unknown>, number>();
  /** A transaction `run` (its promise) took the log head at `size`: track it until it ends. */
  heldHead(run: Promise<unknown>, size: number): void {
    if (this.holding.has(run)) return;
    this.holding.set(run, size);
    const done = (): void => {
      this.holding.delete(run);
    };
    run.then(done, done);
  }
  /**
   * Settles once every transaction that holds the log head now and took it below `below` (all
   * of them when omitted) has ended (and reported). Only those can have appended a committed
   * leaf under `below`: one still waiting for the head, or holding it at a size ≥ `below`,
   * appends at or after `below` (ADR 0074: a catch-up no longer waits a whole commit of this
   * process that cannot hold any leaf it reads).
   */
  settled(below = Number.POSITIVE_INFINITY): Promise<void> {
    const wait: Promise<unknown>[] = [];
    for (const [run, size] of this.holding) if (size < below) wait.push(run);
    if (wait.length === 0) return Promise.resolve();
    return Promise.allSettled(wait).then(() => undefined);
  }
}

/**
 * `inner` with its entry mutations reported through `emit` once committed. `inTx`: `inner` is a
 * transaction view, so `emit` is the enclosing transaction's buffer.
 */
function decorate<S extends StorageBackend>(
  inner: S,
  emit: Emit,
  inTx: boolean,
  local: LocalCommits | undefined,
  /** In a root transaction with `local`: report that it took the log head (at that size). */
  heldHead?: (size: number) => void,
): S {
  const o: Partial<Record<keyof StorageBackend, unknown>> = {
    putEntry: async (e: StoredEntry): Promise<void> => {
      await inner.putEntry(e);
      emit([{ op: 'put', entry: e }]);
    },
    markDeleted: async (id: string): Promise<void> => {
      await inner.markDeleted(id);
      emit([{ op: 'deleted', id }]);
    },
    markSuperseded: async (id: string, by: string): Promise<void> => {
      await inner.markSuperseded(id, by);
      emit([{ op: 'superseded', id, by }]);
    },
    extendExpiry: async (id: string, ns: bigint): Promise<bigint | undefined> => {
      const now = await inner.extendExpiry(id, ns);
      emit([{ op: 'expiry', id, expiresAtNs: now }]);
      return now;
    },
    transaction: <T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> => {
      // Nested: the backend joins the enclosing transaction, so its changes join that buffer.
      if (inTx) return inner.transaction((tx) => fn(decorate(tx, emit, true, local, heldHead)));
      const box: { run?: Promise<T>; held?: number } = {};
      const took =
        local === undefined
          ? undefined
          : (size: number): void => {
              box.held = size;
              if (box.run !== undefined) local.heldHead(box.run, size);
            };
      const run = (box.run = (async () => {
        const buffer: EntryChange[] = [];
        const push: Emit = (cs) => {
          for (const c of cs) buffer.push(c);
        };
        const r = await inner.transaction((tx) => fn(decorate(tx, push, true, local, took)));
        if (buffer.length > 0) emit(buffer); // committed
        return r;
      })());
      if (box.held !== undefined) local?.heldHead(run, box.held);
      return run;
    },
  };
  const putEntries = inner.putEntries;
  if (putEntries !== undefined) {
    o.putEntries = async (es: readonly StoredEntry[]): Promise<void> => {
      await putEntries.call(inner, es);
      emit(es.map((entry) => ({ op: 'put', entry })));
    };
  }
  const asPrincipal = inner.asPrincipal;
  if (asPrincipal !== undefined) {
    o.asPrincipal = (p: string): StorageBackend =>
      decorate(asPrincipal.call(inner, p), emit, inTx, local, heldHead);
  }
  const lockLogHead = inner.lockLogHead;
  if (inTx && heldHead !== undefined && lockLogHead !== undefined) {
    o.lockLogHead = async (): Promise<number> => {
      const size = await lockLogHead.call(inner);
      heldHead(size);
      return size;
    };
  }
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(o, prop)) return o[prop as keyof StorageBackend];
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      let b = bound.get(prop);
      if (b === undefined) bound.set(prop, (b = (v as (...a: unknown[]) => unknown).bind(target)));
      return b;
    },
  });
}

/**
 * `root` with every committed entry change reported to `sink` (see the module comment); its
 * transactions are tracked in `local` when given.
 */
export function observeStorage(root: RootStorage, sink: Emit, local?: LocalCommits): RootStorage {
  return decorate(root, sink, false, local);
}
