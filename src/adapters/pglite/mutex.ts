/**
 * @module adapters/pglite/mutex
 * A promise-chain mutex: one holder at a time, in arrival order, surviving rejections (the
 * backend's writer lock and the worker proxy's per-call ordering).
 */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn);
    this.tail = p.catch(() => undefined);
    return p;
  }
}
