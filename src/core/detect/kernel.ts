/**
 * @module core/detect/kernel
 * The one hot loop of MemSAD: dot products of a candidate against every vector of the query
 * history (1,000 × 384 multiply-adds per write). Plain JavaScript manages ~0.45 ms on this
 * class of machine; a 4-lane WebAssembly SIMD kernel with two accumulators (hand-assembled below, ~200 bytes, no
 * toolchain) brings it near 0.1 ms. When WebAssembly SIMD is unavailable the JavaScript loop
 * gives identical results (up to float rounding).
 *
 * Layout: rows of `stride` floats (the width rounded up to 8, zero-padded) in one linear
 * memory; the candidate and the output live after the rows.
 */

// (module (memory (export "mem") 1)
//   (func (export "dots") (param $h i32) (param $p i32) (param $out i32) (param $n i32)
//         (param $dbytes i32) (local $r i32) (local $j i32) (local $acc v128) ...))
// prettier-ignore
const WASM_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  // type section: (i32 i32 i32 i32 i32) -> ()
  0x01, 0x09, 0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00,
  // function section
  0x03, 0x02, 0x01, 0x00,
  // memory section: 1 page minimum
  0x05, 0x03, 0x01, 0x00, 0x01,
  // export section: "dots" func 0, "mem" memory 0
  0x07, 0x0e, 0x02, 0x04, 0x64, 0x6f, 0x74, 0x73, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00,
]);

// prettier-ignore
const WASM_BODY = new Uint8Array([
  0x02, 0x02, 0x7f, 0x02, 0x7b, // locals: 2 × i32 (r=5, j=6), 2 × v128 (acc=7, acc2=8)
  0x02, 0x40, // block $done
  0x03, 0x40, //  loop $rows
  0x20, 0x05, 0x20, 0x03, 0x4f, 0x0d, 0x01, // if r >= n: br $done
  0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x22, 0x07, 0x21, 0x08, // acc = acc2 = 0
  0x41, 0x00, 0x21, 0x06, // j = 0
  0x03, 0x40, //   loop $inner
  0x20, 0x07,
  0x20, 0x00, 0x20, 0x06, 0x6a, 0xfd, 0x00, 0x02, 0x00, // v128.load (h + j)
  0x20, 0x01, 0x20, 0x06, 0x6a, 0xfd, 0x00, 0x02, 0x00, // v128.load (p + j)
  0xfd, 0xe6, 0x01, 0xfd, 0xe4, 0x01, 0x21, 0x07, // acc += a * b
  0x20, 0x08,
  0x20, 0x00, 0x20, 0x06, 0x6a, 0xfd, 0x00, 0x02, 0x10, // v128.load offset=16 (h + j)
  0x20, 0x01, 0x20, 0x06, 0x6a, 0xfd, 0x00, 0x02, 0x10, // v128.load offset=16 (p + j)
  0xfd, 0xe6, 0x01, 0xfd, 0xe4, 0x01, 0x21, 0x08, // acc2 += a * b
  0x20, 0x06, 0x41, 0x20, 0x6a, 0x22, 0x06, // j += 32
  0x20, 0x04, 0x49, 0x0d, 0x00, // if j < dbytes: continue
  0x0b, //   end $inner
  0x20, 0x07, 0x20, 0x08, 0xfd, 0xe4, 0x01, 0x21, 0x07, // acc += acc2
  0x20, 0x02, // out address
  0x20, 0x07, 0xfd, 0x1f, 0x00,
  0x20, 0x07, 0xfd, 0x1f, 0x01, 0x92,
  0x20, 0x07, 0xfd, 0x1f, 0x02, 0x92,
  0x20, 0x07, 0xfd, 0x1f, 0x03, 0x92,
  0x38, 0x02, 0x00, // f32.store
  0x20, 0x02, 0x41, 0x04, 0x6a, 0x21, 0x02, // out += 4
  0x20, 0x00, 0x20, 0x04, 0x6a, 0x21, 0x00, // h += dbytes
  0x20, 0x05, 0x41, 0x01, 0x6a, 0x21, 0x05, // r += 1
  0x0c, 0x00, //  br $rows
  0x0b, // end loop
  0x0b, // end block
  0x0b, // end func
]);

/** The slice of the WebAssembly API used here (the project's `lib` omits its types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array<ArrayBuffer>) => object;
  Instance: new (mod: object, imports: object) => { readonly exports: unknown };
}
const WA: WasmApi | undefined = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface WasmKernel {
  readonly mem: WasmMemory;
  readonly dots: (h: number, p: number, out: number, n: number, dbytes: number) => void;
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Head + code section (one function body), with LEB128 sizes computed here. */
function assemble(): Uint8Array<ArrayBuffer> {
  const body = [...leb(WASM_BODY.length), ...WASM_BODY];
  const section = [0x01, ...body];
  return new Uint8Array([...WASM_BYTES, 0x0a, ...leb(section.length), ...section]);
}

let cached: WasmKernel | null | undefined;

function loadKernel(): WasmKernel | null {
  if (cached !== undefined) return cached;
  try {
    if (WA === undefined) throw new Error('no WebAssembly');
    const mod = new WA.Module(assemble());
    const inst = new WA.Instance(mod, {});
    const ex = inst.exports as unknown as WasmKernel;
    cached = { mem: ex.mem, dots: ex.dots };
  } catch {
    cached = null;
  }
  return cached;
}

/** Round a width up to a multiple of 8 (two SIMD lane groups per kernel step). */
export function strideOf(dimensions: number): number {
  return (dimensions + 7) & ~7;
}

/**
 * A fixed-capacity matrix of row vectors with a fast "dot every row with x" operation. Rows
 * are written in place (the caller decides which slot a vector goes to: a FIFO ring).
 */
export class DotMatrix {
  readonly dimensions: number;
  readonly capacity: number;
  readonly stride: number;
  readonly #kernel: WasmKernel | null;
  #rows!: Float32Array;
  #x!: Float32Array;
  #out!: Float32Array;
  readonly #rowsByte = 0;
  #xByte = 0;
  #outByte = 0;

  constructor(dimensions: number, capacity: number, opts: { simd?: boolean } = {}) {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('bad dimensions');
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('bad capacity');
    this.dimensions = dimensions;
    this.capacity = capacity;
    this.stride = strideOf(dimensions);
    this.#kernel = opts.simd === false ? null : loadKernel();
    const floats = capacity * this.stride + this.stride + capacity;
    if (this.#kernel !== null && WA !== undefined) {
      // Each DotMatrix owns a private instance so histories never share memory.
      const mod = new WA.Module(assemble());
      const inst = new WA.Instance(mod, {});
      const ex = inst.exports as unknown as WasmKernel;
      const need = floats * 4;
      const pages = Math.ceil(need / 65536) - ex.mem.buffer.byteLength / 65536;
      if (pages > 0) ex.mem.grow(pages);
      this.#kernel = { mem: ex.mem, dots: ex.dots };
      const buf = ex.mem.buffer;
      this.#xByte = capacity * this.stride * 4;
      this.#outByte = this.#xByte + this.stride * 4;
      this.#rows = new Float32Array(buf, this.#rowsByte, capacity * this.stride);
      this.#x = new Float32Array(buf, this.#xByte, this.stride);
      this.#out = new Float32Array(buf, this.#outByte, capacity);
    } else {
      this.#rows = new Float32Array(capacity * this.stride);
      this.#x = new Float32Array(this.stride);
      this.#out = new Float32Array(capacity);
    }
  }

  /** True when the SIMD kernel is in use. */
  get simd(): boolean {
    return this.#kernel !== null;
  }

  /** Write `v` (length `dimensions`) into row `slot`. */
  setRow(slot: number, v: ArrayLike<number>): void {
    const o = slot * this.stride;
    for (let i = 0; i < this.dimensions; i++) this.#rows[o + i] = v[i] as number;
  }

  /**
   * Dot `scale·x` with the first `n` rows; returns a view valid until the next call (copy it
   * to keep it).
   */
  dots(x: ArrayLike<number>, n: number, scale = 1): Float32Array {
    const m = Math.min(Math.max(n, 0), this.capacity);
    const xs = this.#x;
    for (let i = 0; i < this.dimensions; i++) xs[i] = (x[i] as number) * scale;
    if (this.#kernel !== null) {
      if (m > 0) this.#kernel.dots(this.#rowsByte, this.#xByte, this.#outByte, m, this.stride * 4);
      return this.#out.subarray(0, m);
    }
    const H = this.#rows;
    const out = this.#out;
    const st = this.stride;
    for (let r = 0, o = 0; r < m; r++, o += st) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let j = 0; j < st; j += 4) {
        a0 += (H[o + j] as number) * (xs[j] as number);
        a1 += (H[o + j + 1] as number) * (xs[j + 1] as number);
        a2 += (H[o + j + 2] as number) * (xs[j + 2] as number);
        a3 += (H[o + j + 3] as number) * (xs[j + 3] as number);
      }
      out[r] = a0 + a1 + a2 + a3;
    }
    return out.subarray(0, m);
  }
}

/** Dot product of two equal-length vectors (JavaScript). */
export function dotProduct(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Cosine similarity; 0 when either vector is zero. */
export function cosineSim(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    s += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : s / Math.sqrt(na * nb);
}

/** A unit-length copy (zero stays zero). */
export function normalized(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v as ArrayLike<number>);
  let n = 0;
  for (let i = 0; i < out.length; i++) n += (out[i] as number) ** 2;
  if (n > 0) {
    const k = 1 / Math.sqrt(n);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * k;
  }
  return out;
}
