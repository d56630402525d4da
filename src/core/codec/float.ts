/**
 * @module core/codec/float
 * Float helpers for preferred serialization (RFC 8949 §4.1, §4.2.1): the shortest of binary16,
 * binary32 and binary64 that represents a value exactly, and binary16 decoding (Appendix D).
 */

const f32Scratch = new DataView(new ArrayBuffer(8));

/**
 * The IEEE 754 binary16 bits of `x` when `x` converts to half precision without loss, else -1.
 * NaN maps to the canonical quiet NaN `0x7e00` (RFC 8949 §4.2.2 suggests it; cbor2 does it).
 */
export function toHalfExact(x: number): number {
  if (x !== x) return 0x7e00;
  if (Math.fround(x) !== x) return -1;
  f32Scratch.setFloat32(0, x);
  const bits = f32Scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00; // ±Infinity (NaN handled above)
  if (exp === 0) return mant === 0 ? sign : -1; // ±0; f32 subnormals are below f16 range
  const e = exp - 127;
  if (e > 15 || e < -24) return -1;
  if (e >= -14) {
    if ((mant & 0x1fff) !== 0) return -1;
    return sign | ((e + 15) << 10) | (mant >>> 13);
  }
  // f16 subnormal: value = m · 2^-24 with m < 1024.
  const full = mant | 0x800000;
  const shift = 13 + (-14 - e);
  if ((full & ((1 << shift) - 1)) !== 0) return -1;
  return sign | (full >>> shift);
}

/** Value of binary16 bits `h` (RFC 8949 Appendix D). */
export function fromHalf(h: number): number {
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  const v =
    exp === 0
      ? mant * 2 ** -24
      : exp === 31
        ? mant === 0
          ? Infinity
          : NaN
        : (mant + 1024) * 2 ** (exp - 25);
  return (h & 0x8000) !== 0 ? -v : v;
}

/** True when a JS number is written as a CBOR integer in memwarden's data model. */
export function isCborInt(x: number): boolean {
  return Number.isSafeInteger(x) && !Object.is(x, -0);
}
