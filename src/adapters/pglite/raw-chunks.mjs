/**
 * The response of a raw PGlite protocol call, collected from its `onRawData` chunks: each chunk
 * is a view into WebAssembly memory that PGlite reuses after the call, so it is copied at
 * once, and the copies are joined at the end. Used on the main thread (`./binary-rows.ts`
 * `rawExchange`) and in the worker (`./worker-host.mjs`): plain JavaScript because the worker
 * cannot load TypeScript (the build copies this file next to the host). Not `concatBytes(...)`:
 * a large result can arrive in more chunks than a call takes arguments.
 */
export class RawChunks {
  /** @type {Uint8Array[]} */
  #chunks = [];
  #total = 0;

  /** `onRawData`'s callback. */
  add = (/** @type {Uint8Array} */ chunk) => {
    this.#chunks.push(chunk.slice());
    this.#total += chunk.length;
  };

  /** The whole response (the one copy when it came in one chunk). */
  joined() {
    if (this.#chunks.length === 1) return /** @type {Uint8Array} */ (this.#chunks[0]);
    const out = new Uint8Array(this.#total);
    let o = 0;
    for (const c of this.#chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}
