/**
 * @module witness/client
 * The log side of C2SP tlog-witness: push a newly published checkpoint to each configured
 * witness with a consistency proof from the size that witness last cosigned, collect the
 * cosignatures, verify each under the witness's configured key, and append them to the note.
 *
 * - The log does not need to remember what a witness saw: it starts from old size 0 and a
 *   witness that knows more answers 409 with its size (`text/x.tlog.size`); the request is
 *   retried once from that size (tlog-witness: "a client … MAY initially make a request with
 *   an old size of zero to obtain it"). The last size each witness cosigned is then kept.
 * - A witness that reports a size larger than the checkpoint (another process of this log
 *   already published further) cannot cosign this one: it is skipped for this checkpoint.
 * - Cosignatures are verified before they are attached (tlog-witness: "The client MUST ignore
 *   any cosignatures from unknown keys"); a witness returning a bad one is an error for that
 *   witness, never attached.
 * - Per checkpoint size the cosigned note is cached; one push per size is in flight at a time;
 *   a witness that failed is retried after `retryAfterMs`, not on every request.
 */
import { fromBase64 } from '../core/bytes.js';
import { MemwardenError, isMemwardenError } from '../core/errors.js';
import {
  type CosignerKey,
  TLOG_SIZE_CONTENT_TYPE,
  formatAddCheckpointRequest,
  parseCosignerVerifierKey,
  parseNote,
  parseTreeSizeBody,
  verifyCosignatures,
} from '../core/merkle/index.js';

/** One configured witness: its submission URL prefix and its cosigner key. */
export interface WitnessEndpoint {
  readonly url: string;
  readonly key: CosignerKey;
}

/** Parse `URL=VKEY` (the `--witness` flag). */
export function parseWitnessSpec(spec: string): WitnessEndpoint {
  const i = spec.indexOf('=');
  if (i <= 0) throw new MemwardenError('INPUT_INVALID', '--witness takes URL=VKEY');
  const url = spec.slice(0, i);
  let u: URL;
  try {
    u = new URL(url);
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', 'witness URL is not a URL', { cause: e });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new MemwardenError('INPUT_INVALID', 'witness URL must be http(s)');
  return { url: url.replace(/\/+$/, ''), key: parseCosignerVerifierKey(spec.slice(i + 1)) };
}

/** The checkpoint to cosign: its size and signed note. */
export interface PublishedCheckpoint {
  readonly size: number;
  readonly note: string;
}

export interface WitnessPublisherOptions {
  readonly witnesses: readonly WitnessEndpoint[];
  /** RFC 6962 consistency proof between two sizes of the log (1 ≤ from < to). */
  readonly consistency: (from: number, to: number) => Promise<readonly Uint8Array[]>;
  /** Per-request timeout (default 5000 ms). */
  readonly timeoutMs?: number;
  /** Wait before retrying a witness that failed (default 10000 ms). */
  readonly retryAfterMs?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Told about each witness failure (code, witness name). */
  readonly onError?: (witness: string, error: MemwardenError) => void;
}

interface WitnessRecord {
  /** The size this witness last cosigned for us (0 = unknown: let it tell us). */
  known: number;
  failedAt: number | undefined;
}

/** Pushes checkpoints to witnesses and serves them cosigned. */
export class WitnessPublisher {
  private readonly records = new Map<WitnessEndpoint, WitnessRecord>();
  private cache: { size: number; note: string; lines: Map<WitnessEndpoint, string> } | undefined;
  private inflight: Promise<string> | undefined;
  private readonly timeoutMs: number;
  private readonly retryAfterMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;

  constructor(private readonly opts: WitnessPublisherOptions) {
    for (const w of opts.witnesses) this.records.set(w, { known: 0, failedAt: undefined });
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.retryAfterMs = opts.retryAfterMs ?? 10_000;
    this.fetchFn = opts.fetch ?? fetch;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The checkpoint's note with every cosignature collected so far appended. Pushes to the
   * witnesses that have not cosigned this size yet (and are not backing off), in parallel.
   */
  async cosign(cp: PublishedCheckpoint): Promise<string> {
    while (this.inflight !== undefined) await this.inflight.catch(() => undefined);
    const cached = this.cache;
    if (cached !== undefined && cached.size === cp.size && cached.note === cp.note) {
      const due = this.opts.witnesses.filter((w) => !cached.lines.has(w) && this.due(w));
      if (due.length === 0) return this.assemble(cached);
    }
    const run = this.push(cp);
    this.inflight = run;
    try {
      return await run;
    } finally {
      this.inflight = undefined;
    }
  }

  private due(w: WitnessEndpoint): boolean {
    const failedAt = this.records.get(w)?.failedAt;
    return failedAt === undefined || this.now() - failedAt >= this.retryAfterMs;
  }

  private assemble(c: { note: string; lines: Map<WitnessEndpoint, string> }): string {
    // Witness order, so the served note is stable.
    return c.note + this.opts.witnesses.map((w) => c.lines.get(w) ?? '').join('');
  }

  private async push(cp: PublishedCheckpoint): Promise<string> {
    if (this.cache === undefined || this.cache.size !== cp.size || this.cache.note !== cp.note) {
      this.cache = { size: cp.size, note: cp.note, lines: new Map() };
    }
    const c = this.cache;
    await Promise.all(
      this.opts.witnesses
        .filter((w) => !c.lines.has(w) && this.due(w))
        .map(async (w) => {
          const rec = this.records.get(w) as WitnessRecord;
          try {
            const line = await this.pushOne(w, rec, cp);
            if (line !== undefined) c.lines.set(w, line);
            rec.failedAt = undefined;
          } catch (e) {
            rec.failedAt = this.now();
            const err = isMemwardenError(e)
              ? e
              : new MemwardenError('WITNESS_UNREACHABLE', 'witness request failed', { cause: e });
            this.opts.onError?.(w.key.name, err);
          }
        }),
    );
    return this.assemble(c);
  }

  /** One witness: request from its known size; on 409 retry once from the size it reports. */
  private async pushOne(
    w: WitnessEndpoint,
    rec: WitnessRecord,
    cp: PublishedCheckpoint,
  ): Promise<string | undefined> {
    let old = rec.known > cp.size ? 0 : rec.known;
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await this.send(w, old, cp);
      if (r.status === 200) {
        const line = this.check(w, cp, r.body);
        rec.known = cp.size;
        return line;
      }
      if (r.status === 409 && r.contentType.startsWith(TLOG_SIZE_CONTENT_TYPE)) {
        const known = parseTreeSizeBody(r.body);
        rec.known = known;
        if (known > cp.size) return undefined; // the witness already saw a larger tree
        if (known === old) break; // same size, different root: a fork as the witness sees it
        old = known;
        continue;
      }
      throw new MemwardenError('WITNESS_REFUSED', `witness answered ${r.status}`, {
        details: { witness: w.key.name, status: r.status, reason: r.body.slice(0, 200) },
      });
    }
    throw new MemwardenError('WITNESS_REFUSED', 'witness refused the checkpoint (conflict)', {
      details: { witness: w.key.name, status: 409 },
    });
  }

  private async send(
    w: WitnessEndpoint,
    old: number,
    cp: PublishedCheckpoint,
  ): Promise<{ status: number; body: string; contentType: string }> {
    const proof = old === 0 || old === cp.size ? [] : await this.opts.consistency(old, cp.size);
    const body = formatAddCheckpointRequest({ oldSize: old, proof, checkpoint: cp.note });
    let res: Response;
    try {
      res = await this.fetchFn(`${w.url}/add-checkpoint`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new MemwardenError('WITNESS_UNREACHABLE', 'witness unreachable', {
        cause: e,
        details: { witness: w.key.name },
      });
    }
    const text = (await res.text()).slice(0, 64 * 1024);
    return { status: res.status, body: text, contentType: res.headers.get('content-type') ?? '' };
  }

  /** Keep only this witness's cosignature line, verified over this checkpoint. */
  private check(w: WitnessEndpoint, cp: PublishedCheckpoint, body: string): string {
    const lines = body.split('\n');
    if (lines.pop() !== '' || lines.length === 0)
      throw new MemwardenError(
        'LOG_COSIGNATURE_INVALID',
        'witness response is not signature lines',
      );
    const mine = lines.filter((l) => {
      const parts = l.split(' ');
      if (parts.length !== 3 || parts[0] !== '\u2014' || parts[1] !== w.key.name) return false;
      try {
        const raw = fromBase64(parts[2] as string);
        return raw.length >= 4 && raw.subarray(0, 4).every((b, i) => b === w.key.keyId[i]);
      } catch {
        return false;
      }
    });
    if (mine.length === 0)
      throw new MemwardenError('LOG_COSIGNATURE_INVALID', 'no cosignature from the configured key');
    const line = `${mine[0] as string}\n`;
    // Throws LOG_COSIGNATURE_INVALID unless it verifies over exactly this checkpoint body.
    const ok = verifyCosignatures(cp.note + line, [w.key]);
    if (ok.length !== 1)
      throw new MemwardenError('LOG_COSIGNATURE_INVALID', 'cosignature did not verify');
    parseNote(cp.note + line);
    return line;
  }
}
