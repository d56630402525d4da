/**
 * @module core/vector/kernel
 * The one hot loop of vector work: dot products of one vector against a contiguous block of
 * rows. A 4-lane WebAssembly SIMD kernel with two accumulators (hand-assembled below, ~200
 * bytes, no toolchain) runs it ~4–5× faster than the JavaScript loop; when WebAssembly SIMD
 * is unavailable (or `simd: false`) the JavaScript loop gives the same results up to float
 * rounding.
 *
 * A {@link DotArena} is one private linear memory of floats: the caller lays out its rows,
 * query and output slots in it (offsets in floats) and asks for `dots` over any contiguous
 * block of rows. Rows are `stride` floats apart, `stride` a multiple of 8 (see
 * {@link strideOf}), padded with zeros. MemSAD's query history (`core/detect/kernel.ts`) and
 * the vector index (`core/vector/index.ts`) both use it.
 */

// (module (memory (export "mem") 1)
//   (func (export "dots") (param $h i32) (param $p i32) (param $out i32) (param $n i32)
//         (param $dbytes i32) (local $r i32) (local $j i32) (local $acc v128) ...)
//   (func (export "dots8") ...same params: int8 rows against an i16 query, i32 results...))
// prettier-ignore
const WASM_HEAD = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  // type section: (i32 i32 i32 i32 i32) -> ()
  0x01, 0x09, 0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00,
  // function section: two functions of type 0
  0x03, 0x03, 0x02, 0x00, 0x00,
  // memory section: 1 page minimum
  0x05, 0x03, 0x01, 0x00, 0x01,
  // export section: "dots" func 0, "mem" memory 0, "dots8" func 1
  0x07, 0x16, 0x03, 0x04, 0x64, 0x6f, 0x74, 0x73, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00,
  0x05, 0x64, 0x6f, 0x74, 0x73, 0x38, 0x00, 0x01,
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

interface WasmExports {
  readonly mem: WasmMemory;
  readonly dots: (h: number, p: number, out: number, n: number, dbytes: number) => void;
  readonly dots8: (h: number, p: number, out: number, n: number, rb: number) => void;
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

/**
 * `dots8`: `out[r] = Σ_j rows[h + r·rb + j] · x[j]` for `r < n`, `j < rb`, as i32: signed-byte
 * rows (−127…127) against a query of signed 16-bit integers `x` from byte `p` (2·rb bytes),
 * `rb` a multiple of 32. Each step takes 32 row bytes: widened to i16 lanes
 * (`i16x8.extend_low/high_i8x16_s`), multiplied with the query's lanes and summed pairwise
 * into i32 (`i32x4.dot_i16x8_s`), four products into two accumulators. Exact integers as long
 * as Σ_j |row_j|·|x_j| < 2³¹ (the caller bounds the query's range by the row width).
 */
// prettier-ignore
const WASM_BODY8 = new Uint8Array([
  // locals: 3 × i32 (r=5, y=6 row pointer, x=7 query pointer), 1 × i32 (end=8),
  // 3 × v128 (acc=9, acc2=10, a=11)
  0x02, 0x04, 0x7f, 0x03, 0x7b,
  0x02, 0x40, // block $done
  0x03, 0x40, //  loop $rows
  0x20, 0x05, 0x20, 0x03, 0x4f, 0x0d, 0x01, // if r >= n: br $done
  0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x22, 0x09, 0x21, 0x0a, // acc = acc2 = 0
  0x20, 0x00, 0x22, 0x06, 0x20, 0x04, 0x6a, 0x21, 0x08, // y = h; end = h + rb
  0x20, 0x01, 0x21, 0x07, // x = p
  0x03, 0x40, //   loop $inner
  0x20, 0x06, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x0b, // a = v128.load (y)
  0x20, 0x09,
  0x20, 0x0b, 0xfd, 0x87, 0x01, // i16x8.extend_low_i8x16_s a
  0x20, 0x07, 0xfd, 0x00, 0x00, 0x00, // v128.load (x)
  0xfd, 0xba, 0x01, 0xfd, 0xae, 0x01, 0x21, 0x09, // acc += i32x4.dot_i16x8_s
  0x20, 0x0a,
  0x20, 0x0b, 0xfd, 0x88, 0x01, // i16x8.extend_high_i8x16_s a
  0x20, 0x07, 0xfd, 0x00, 0x00, 0x10, // v128.load offset=16 (x)
  0xfd, 0xba, 0x01, 0xfd, 0xae, 0x01, 0x21, 0x0a, // acc2 += …
  0x20, 0x06, 0xfd, 0x00, 0x00, 0x10, 0x21, 0x0b, // a = v128.load offset=16 (y)
  0x20, 0x09,
  0x20, 0x0b, 0xfd, 0x87, 0x01,
  0x20, 0x07, 0xfd, 0x00, 0x00, 0x20, // v128.load offset=32 (x)
  0xfd, 0xba, 0x01, 0xfd, 0xae, 0x01, 0x21, 0x09, // acc += …
  0x20, 0x0a,
  0x20, 0x0b, 0xfd, 0x88, 0x01,
  0x20, 0x07, 0xfd, 0x00, 0x00, 0x30, // v128.load offset=48 (x)
  0xfd, 0xba, 0x01, 0xfd, 0xae, 0x01, 0x21, 0x0a, // acc2 += …
  0x20, 0x07, 0x41, 0xc0, 0x00, 0x6a, 0x21, 0x07, // x += 64
  0x20, 0x06, 0x41, 0x20, 0x6a, 0x22, 0x06, // y += 32
  0x20, 0x08, 0x49, 0x0d, 0x00, // if y < end: continue
  0x0b, //   end $inner
  0x20, 0x02, // out address
  0x20, 0x09, 0x20, 0x0a, 0xfd, 0xae, 0x01, 0x22, 0x09, // acc += acc2
  0xfd, 0x1b, 0x00,
  0x20, 0x09, 0xfd, 0x1b, 0x01, 0x6a,
  0x20, 0x09, 0xfd, 0x1b, 0x02, 0x6a,
  0x20, 0x09, 0xfd, 0x1b, 0x03, 0x6a,
  0x36, 0x02, 0x00, // i32.store
  0x20, 0x02, 0x41, 0x04, 0x6a, 0x21, 0x02, // out += 4
  0x20, 0x00, 0x20, 0x04, 0x6a, 0x21, 0x00, // h += rb
  0x20, 0x05, 0x41, 0x01, 0x6a, 0x21, 0x05, // r += 1
  0x0c, 0x00, //  br $rows
  0x0b, // end loop
  0x0b, // end block
  0x0b, // end func
]);

/** Head + code section (the two function bodies), with LEB128 sizes computed here. */
function assemble(): Uint8Array<ArrayBuffer> {
  const body = [...leb(WASM_BODY.length), ...WASM_BODY];
  const body8 = [...leb(WASM_BODY8.length), ...WASM_BODY8];
  const section = [0x02, ...body, ...body8];
  return new Uint8Array([...WASM_HEAD, 0x0a, ...leb(section.length), ...section]);
}

let compiled: object | null | undefined;

/** The compiled module (once per process), or null when WebAssembly SIMD is unavailable. */
function wasmModule(): object | null {
  if (compiled !== undefined) return compiled;
  try {
    if (WA === undefined) throw new Error('no WebAssembly');
    const mod = new WA.Module(assemble());
    new WA.Instance(mod, {}); // validates SIMD support at instantiation too
    compiled = mod;
  } catch {
    compiled = null;
  }
  return compiled;
}

/**
 * `out[at + k] = Σ_j x[j]·b_k[j]` over `j < n` for the four vectors b0…b3, in float64: each sum
 * accumulated in index order exactly as a one-vector loop adds it (the same values bit for
 * bit), the four in one pass over `x` so the loop is not bound by the latency of one chain of
 * additions (and fetches four rows at once). Lengths are the caller's to check.
 */
export function dots4(
  x: Float32Array,
  b0: Float32Array,
  b1: Float32Array,
  b2: Float32Array,
  b3: Float32Array,
  n: number,
  out: Float64Array,
  at: number,
): void {
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  for (let j = 0; j < n; j++) {
    const v = x[j] as number;
    d0 += v * (b0[j] as number);
    d1 += v * (b1[j] as number);
    d2 += v * (b2[j] as number);
    d3 += v * (b3[j] as number);
  }
  out[at] = d0;
  out[at + 1] = d1;
  out[at + 2] = d2;
  out[at + 3] = d3;
}

/** True when this runtime can run the WebAssembly SIMD kernel. */
export function simdAvailable(): boolean {
  return wasmModule() !== null;
}

/** Round a width up to a multiple of 8 (two SIMD lane groups per kernel step). */
export function strideOf(dimensions: number): number {
  return (dimensions + 7) & ~7;
}

const PAGE_FLOATS = 65536 / 4;
/** wasm32 memories stop at 4 GiB; stay a page short of it. */
const MAX_FLOATS = (65535 * 65536) / 4;

/**
 * One private, growable memory of floats with a "dot one vector with a block of rows"
 * operation. Offsets are in floats. `f32` is a view of the whole memory; it is replaced when
 * the memory grows, so re-read it after {@link DotArena.ensure}.
 */
export class DotArena {
  readonly simd: boolean;
  #f32: Float32Array;
  #i8: Int8Array | undefined;
  #i16: Int16Array | undefined;
  #i32: Int32Array | undefined;
  readonly #wasm: WasmExports | null;

  constructor(floats: number, opts: { readonly simd?: boolean } = {}) {
    if (!Number.isInteger(floats) || floats < 0 || floats > MAX_FLOATS)
      throw new RangeError('bad arena size');
    const mod = opts.simd === false ? null : wasmModule();
    if (mod !== null && WA !== undefined) {
      // Each arena owns a private instance, so arenas never share memory.
      const ex = new WA.Instance(mod, {}).exports as unknown as WasmExports;
      this.#wasm = { mem: ex.mem, dots: ex.dots, dots8: ex.dots8 };
      this.simd = true;
      this.#f32 = new Float32Array(ex.mem.buffer);
    } else {
      this.#wasm = null;
      this.simd = false;
      this.#f32 = new Float32Array(0);
    }
    this.ensure(floats);
  }

  /** The whole memory as floats (replaced when the memory grows). */
  get f32(): Float32Array {
    return this.#f32;
  }

  /** The same memory as signed bytes (replaced when the memory grows). */
  get i8(): Int8Array {
    if (this.#i8?.buffer !== this.#f32.buffer) this.#i8 = new Int8Array(this.#f32.buffer);
    return this.#i8;
  }

  /** The same memory as signed 16-bit integers (replaced when the memory grows). */
  get i16(): Int16Array {
    if (this.#i16?.buffer !== this.#f32.buffer) this.#i16 = new Int16Array(this.#f32.buffer);
    return this.#i16;
  }

  /** The same memory as 32-bit integers (replaced when the memory grows). */
  get i32(): Int32Array {
    if (this.#i32?.buffer !== this.#f32.buffer) this.#i32 = new Int32Array(this.#f32.buffer);
    return this.#i32;
  }

  /** Capacity in floats. */
  get floats(): number {
    return this.#f32.length;
  }

  /** Grow (never shrink) to hold at least `floats` floats; new space is zero. */
  ensure(floats: number): void {
    if (floats <= this.#f32.length) return;
    if (floats > MAX_FLOATS) throw new RangeError('vector arena over 4 GiB');
    if (this.#wasm !== null) {
      const have = this.#wasm.mem.buffer.byteLength / 65536;
      const want = Math.ceil(floats / PAGE_FLOATS);
      if (want > have) this.#wasm.mem.grow(want - have);
      this.#f32 = new Float32Array(this.#wasm.mem.buffer);
    } else {
      const next = new Float32Array(floats);
      next.set(this.#f32);
      this.#f32 = next;
    }
  }

  /**
   * `out[o + r] = Σ_j rows[h + r·stride + j] · x[p + j]` for `r < n`, `j < stride`.
   * `h`, `p`, `out` are float offsets (whole rows, the query padded with zeros to `stride`);
   * `stride` is a multiple of 8. Bounds are the caller's to keep.
   */
  dots(h: number, p: number, out: number, n: number, stride: number): void {
    if (n <= 0) return;
    if (this.#wasm !== null) {
      this.#wasm.dots(h * 4, p * 4, out * 4, n, stride * 4);
      return;
    }
    const F = this.#f32;
    for (let r = 0, o = h; r < n; r++, o += stride) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let j = 0; j < stride; j += 4) {
        a0 += (F[o + j] as number) * (F[p + j] as number);
        a1 += (F[o + j + 1] as number) * (F[p + j + 1] as number);
        a2 += (F[o + j + 2] as number) * (F[p + j + 2] as number);
        a3 += (F[o + j + 3] as number) * (F[p + j + 3] as number);
      }
      F[out + r] = a0 + a1 + a2 + a3;
    }
  }

  /**
   * `i32[out + r] = Σ_j i8[h + r·rowBytes + j] · i16[p/2 + j]` for `r < n`, `j < rowBytes`:
   * exact integer dot products of signed-byte rows (every byte in −127…127) with a query of
   * signed 16-bit integers, while Σ_j |row_j|·|query_j| < 2³¹ (the caller's to keep, with the
   * other bounds). `h`, `p` are byte offsets (`p` even), `out` an offset in 32-bit words,
   * `rowBytes` a multiple of 32.
   */
  dots8(h: number, p: number, out: number, n: number, rowBytes: number): void {
    if (n <= 0) return;
    if (this.#wasm !== null) {
      this.#wasm.dots8(h, p, out * 4, n, rowBytes);
      return;
    }
    const B = this.i8;
    const Q = this.i16;
    const O = this.i32;
    const q = p >> 1;
    for (let r = 0, o = h; r < n; r++, o += rowBytes) {
      let a = 0;
      for (let j = 0; j < rowBytes; j++) a += (B[o + j] as number) * (Q[q + j] as number);
      O[out + r] = a;
    }
  }
}
