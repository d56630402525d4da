/**
 * @module adapters/memory/journal
 * An append-only JSONL journal of committed transactions, so the in-memory backend can back
 * the foundation CLI across invocations. Each line is one transaction, written and fsync'd
 * before the transaction becomes visible; a torn last line (crash mid-write) is ignored on
 * replay because it was never acknowledged.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { MemwardenError } from '../../core/errors.js';
import { StagedWrites } from './state.js';

export interface Journal {
  readonly replayed: StagedWrites[];
  append(w: StagedWrites): void;
  close(): void;
}

type Wire = Record<string, unknown>;

function replacer(k: string, v: unknown): unknown {
  // Caller metadata is arbitrary JSON: kept as one string, so a key like `$n` in it is never
  // revived as one of the markers below.
  if (k === 'metadata' && v !== null && typeof v === 'object') return { $j: JSON.stringify(v) };
  if (typeof v === 'bigint') return { $n: v.toString() };
  if (v instanceof Uint8Array) return { $b: Buffer.from(v).toString('base64') };
  if (v instanceof Float32Array)
    return { $f: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  return v;
}

function reviver(_k: string, v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Wire;
    const keys = Object.keys(o);
    if (keys.length === 1 && typeof o.$j === 'string') return JSON.parse(o.$j) as unknown;
    if (keys.length === 1 && typeof o.$n === 'string') return BigInt(o.$n);
    if (keys.length === 1 && typeof o.$b === 'string')
      return new Uint8Array(Buffer.from(o.$b, 'base64'));
    if (keys.length === 1 && typeof o.$f === 'string') {
      const b = Buffer.from(o.$f, 'base64');
      return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    }
  }
  return v;
}

function toWire(w: StagedWrites): string {
  return JSON.stringify(
    {
      leaves: w.leaves,
      nodes: w.nodes,
      checkpoints: w.checkpoints,
      principals: w.principals,
      keys: w.keys,
      keyPatches: [...w.keyPatches.entries()],
      entries: w.entries,
      entryPatches: [...w.entryPatches.entries()],
      quotas: [...w.quotas.entries()],
      reviews: w.reviews,
      reviewDecisions: [...w.reviewDecisions.entries()],
      audit: w.audit,
      apiKeys: w.apiKeys,
      revokedKeys: [...w.revokedKeys],
    },
    replacer,
  );
}

function fromWire(line: string): StagedWrites {
  const o = JSON.parse(line, reviver) as Wire;
  const w = new StagedWrites();
  Object.assign(w, {
    leaves: o.leaves,
    nodes: o.nodes,
    checkpoints: o.checkpoints,
    principals: o.principals,
    keys: o.keys,
    keyPatches: new Map(o.keyPatches as [string, object][]),
    entries: o.entries,
    // Absent in journals written before the Memory API stage.
    entryPatches: new Map((o.entryPatches ?? []) as [string, object][]),
    quotas: new Map((o.quotas ?? []) as [string, number][]),
    reviews: o.reviews ?? [],
    reviewDecisions: new Map((o.reviewDecisions ?? []) as [string, object][]),
    audit: o.audit ?? [],
    apiKeys: o.apiKeys ?? [],
    revokedKeys: new Set((o.revokedKeys ?? []) as string[]),
  });
  for (const l of w.leaves)
    if ((l as { owner?: unknown }).owner === undefined) Object.assign(l, { owner: null });
  return w;
}

export async function openJournal(path: string): Promise<Journal> {
  mkdirSync(dirname(path), { recursive: true });
  const replayed: StagedWrites[] = [];
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    let goodBytes = 0;
    lines.forEach((line, i) => {
      if (line.length === 0) {
        if (i < lines.length - 1) goodBytes += 1;
        return;
      }
      try {
        replayed.push(fromWire(line));
        goodBytes += Buffer.byteLength(line) + 1;
      } catch (e) {
        // Only the last line may be torn (never acknowledged); anything else is corruption.
        if (lines.slice(i + 1).some((l) => l.length > 0)) {
          throw new MemwardenError(
            'STORAGE_FAILED',
            `journal ${path} is corrupt at line ${i + 1}`,
            { cause: e },
          );
        }
      }
    });
    // Drop a torn tail so the next append starts on a fresh line.
    if (goodBytes < Buffer.byteLength(text)) truncateSync(path, goodBytes);
  }
  const fd = openSync(path, 'a', 0o600);
  return {
    replayed,
    append(w) {
      writeSync(fd, toWire(w) + '\n');
      fsyncSync(fd);
    },
    close() {
      closeSync(fd);
    },
  };
}
