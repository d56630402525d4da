/**
 * A small coverage-guided (greybox) fuzzer: libFuzzer's loop on V8's own block coverage, used
 * because Jazzer.js cannot load on this platform (docs/adr/0013).
 *
 * Loop: pick a corpus input, apply 1–8 byte-level mutations (bit flips, interesting bytes,
 * CBOR heads, insert / delete / duplicate ranges, splices with another input, dictionary
 * tokens), run the target, then ask V8 for precise block coverage (`Profiler.takePreciseCoverage`
 * with call counts resets the counters, so each call reports what that one input executed).
 * An input that reaches a (function, block) not seen before joins the corpus. A thrown
 * `FuzzFinding` or an input slower than `maxMsPerInput` is a crash: written out and reported.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector';
import type { FuzzTarget } from './targets.js';

export interface FuzzOptions {
  readonly seconds: number;
  readonly seed: number;
  /** Only coverage of scripts whose URL contains one of these counts (e.g. `/src/core/`). */
  readonly coverageFilter: readonly string[];
  /** Tokens spliced in by the dictionary mutator (CBOR heads, note syntax…). */
  readonly dictionary?: readonly Uint8Array[];
  readonly maxLen?: number;
  /** An input taking longer than this is a hang finding (default 2 s: generous, the box is shared). */
  readonly maxMsPerInput?: number;
  /** Where new corpus inputs and crashes go (nothing written when absent). */
  readonly outDir?: string;
}

export interface FuzzReport {
  readonly target: string;
  readonly execs: number;
  readonly seconds: number;
  readonly corpus: number;
  readonly blocks: number;
  readonly outcomes: Record<string, number>;
  readonly crashes: readonly { readonly input: string; readonly error: string }[];
  readonly slowestMs: number;
}

/** xorshift32: deterministic per seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

const INTERESTING = [0x00, 0x01, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x20, 0x3f, 0x40, 0x5f, 0x60, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc2, 0xc3, 0xf4, 0xf6, 0xf7, 0xf9, 0xfa, 0xfb, 0xff, 0x0a, 0x2b, 0x3d];

export function mutateBytes(input: Uint8Array, corpus: readonly Uint8Array[], dict: readonly Uint8Array[], r: () => number, maxLen: number): Uint8Array {
  let b = Array.from(input);
  const n = 1 + (r() % 8);
  for (let k = 0; k < n; k++) {
    const at = b.length === 0 ? 0 : r() % b.length;
    switch (r() % 10) {
      case 0:
        if (b.length > 0) b[at] = (b[at] as number) ^ (1 << (r() % 8));
        break;
      case 1:
        if (b.length > 0) b[at] = INTERESTING[r() % INTERESTING.length] as number;
        break;
      case 2:
        if (b.length > 0) b[at] = r() & 0xff;
        break;
      case 3:
        b.splice(at, 1 + (r() % Math.min(16, Math.max(1, b.length - at))));
        break;
      case 4:
        b.splice(at, 0, ...Array.from({ length: 1 + (r() % 4) }, () => r() & 0xff));
        break;
      case 5: {
        // duplicate a range
        const len = 1 + (r() % 32);
        b.splice(at, 0, ...b.slice(at, at + len));
        break;
      }
      case 6: {
        const other = corpus[r() % corpus.length];
        if (other !== undefined && other.length > 0) {
          const from = r() % other.length;
          const len = 1 + (r() % Math.min(64, other.length - from));
          b.splice(at, r() % 8, ...other.subarray(from, from + len));
        }
        break;
      }
      case 7: {
        const tok = dict[r() % Math.max(1, dict.length)];
        if (tok !== undefined) b.splice(at, r() % 2 === 0 ? 0 : tok.length, ...tok);
        break;
      }
      case 8:
        b = b.slice(0, at);
        break;
      case 9:
        // +/- small delta on a byte (lengths and counts)
        if (b.length > 0) b[at] = ((b[at] as number) + (r() % 2 === 0 ? 1 : 255)) & 0xff;
        break;
    }
  }
  if (b.length > maxLen) b = b.slice(0, maxLen);
  return Uint8Array.from(b);
}

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[];
}

function post<T>(s: Session, method: string, params?: object): T {
  let out: T | undefined;
  let err: Error | null = null;
  s.post(method, params ?? {}, (e, r) => {
    err = e;
    out = r as T;
  });
  // The in-process inspector answers synchronously.
  if (err !== null) throw err;
  return out as T;
}

/** Run `target` for `opts.seconds`, starting from `seeds`. */
export function fuzz(target: FuzzTarget, seeds: readonly Uint8Array[], opts: FuzzOptions): FuzzReport {
  const r = rng(opts.seed);
  const maxLen = opts.maxLen ?? 4096;
  const maxMs = opts.maxMsPerInput ?? 2000;
  const session = new Session();
  session.connect();
  post(session, 'Profiler.enable');
  post(session, 'Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  const seen = new Set<string>();
  const urlIds = new Map<string, number>();
  const newBlocks = (): number => {
    const { result } = post<{ result: ScriptCoverage[] }>(session, 'Profiler.takePreciseCoverage');
    let fresh = 0;
    for (const sc of result) {
      if (!opts.coverageFilter.some((f) => sc.url.includes(f))) continue;
      let id = urlIds.get(sc.url);
      if (id === undefined) urlIds.set(sc.url, (id = urlIds.size));
      for (const fn of sc.functions)
        for (const rg of fn.ranges) {
          if (rg.count === 0) continue;
          // Bucket hit counts like libFuzzer (1, 2, 3, 4-7, 8-15, …): loops count as new behaviour.
          const bucket = rg.count < 4 ? rg.count : 31 - Math.clz32(rg.count) + 2;
          const key = `${id}:${rg.startOffset}:${rg.endOffset}:${bucket}`;
          if (!seen.has(key)) {
            seen.add(key);
            fresh++;
          }
        }
    }
    return fresh;
  };
  const outcomes: Record<string, number> = {};
  const crashes: { input: string; error: string }[] = [];
  let slowest = 0;
  const save = (dir: string, b: Uint8Array): string => {
    const name = createHash('sha256').update(b).digest('hex').slice(0, 16);
    if (opts.outDir !== undefined) {
      mkdirSync(join(opts.outDir, dir), { recursive: true });
      writeFileSync(join(opts.outDir, dir, name), b);
    }
    return name;
  };
  const exec = (b: Uint8Array): boolean => {
    const t0 = performance.now();
    let outcome: string;
    try {
      outcome = target.run(b);
    } catch (e) {
      const name = save(`crashes-${target.name}`, b);
      crashes.push({ input: Buffer.from(b).toString('base64'), error: `${(e as Error).message} [${name}]` });
      outcome = 'CRASH';
    }
    const ms = performance.now() - t0;
    slowest = Math.max(slowest, ms);
    if (ms > maxMs) {
      const name = save(`crashes-${target.name}`, b);
      crashes.push({ input: Buffer.from(b).toString('base64'), error: `slow input: ${ms.toFixed(1)} ms [${name}]` });
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    return newBlocks() > 0;
  };

  const corpus: Uint8Array[] = [];
  newBlocks(); // discard what loading did
  for (const s of seeds) if (exec(s) || corpus.length === 0) corpus.push(s);
  const t0 = performance.now();
  let execs = seeds.length;
  const deadline = t0 + opts.seconds * 1000;
  while (performance.now() < deadline && crashes.length < 10) {
    const base = corpus[r() % corpus.length] as Uint8Array;
    const cand = mutateBytes(base, corpus, opts.dictionary ?? [], r, maxLen);
    execs++;
    if (exec(cand)) {
      corpus.push(cand);
      save(`corpus-${target.name}`, cand);
    }
  }
  post(session, 'Profiler.stopPreciseCoverage');
  session.disconnect();
  return {
    target: target.name,
    execs,
    seconds: (performance.now() - t0) / 1000,
    corpus: corpus.length,
    blocks: seen.size,
    outcomes,
    crashes,
    slowestMs: Math.round(slowest * 10) / 10,
  };
}
