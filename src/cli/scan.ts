/**
 * @module cli/scan
 * `memwarden scan --stage write|read [--tier T] < in.jsonl > out.jsonl` — screen an exported
 * memory dump with the same `DetectionPipeline` the store uses, each line as a write (or read)
 * of tier T would be screened (per-tier thresholds: the instruction screen holds EXTERNAL_*
 * writes on far less evidence than USER_VERIFIED ones). Each input line `{"text": …}`
 * (optional `"tier"`, and for the read stage `"query"` / `"embedding"`) yields one output line
 * `{"flagged": bool, "score": number, "reasons": [...], "findings": [{detector, flagged, score,
 * threshold, reason}]}`; a line that is not such an object yields `{"flagged": false, …,
 * "error": "INPUT_INVALID"}` so output lines stay aligned with input lines.
 *
 * Without `--baseline` only the content rules run (markers, validation, injection risk): the
 * statistical detectors need a benign baseline of the deployment's own entries to calibrate
 * (a synthetic one would mis-set thresholds). With `--baseline FILE` (JSONL of benign
 * `{"text"}`) MemSAD+ and the proactive probes calibrate on it; with `--queries FILE` too,
 * MemSAD runs against those queries as its history.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { type Command, Option } from 'commander';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../adapters/embeddings/index.js';
import { SourceTiers, type SourceTier } from '../core/trust.js';
import type { Finding } from '../core/detect/index.js';
import { DetectionPipeline, type Verdict, verdictOf } from '../memory/detect/pipeline.js';
import type { Embedder } from '../ports/embedder.js';

export interface ScanOptions {
  readonly stage: 'write' | 'read';
  readonly principalTier: SourceTier;
  readonly embedder: Embedder;
  /** Benign texts to calibrate MemSAD+ / proactive / MemSAD. */
  readonly baseline?: readonly string[];
  /** Queries for MemSAD's history (needs a baseline). */
  readonly queries?: readonly string[];
  readonly watermarkKey?: string;
}

/** A finding as a scan line carries it (the review console shows `reason`). */
export interface ScanFinding {
  readonly detector: string;
  readonly flagged: boolean;
  readonly score: number;
  /** null: the detector abstained (an infinite threshold). */
  readonly threshold: number | null;
  readonly reason: string;
}

type ScanLine = Verdict & { findings: ScanFinding[]; error?: string };

const invalid = (): ScanLine => ({
  flagged: false,
  score: 0,
  reasons: [],
  findings: [],
  error: 'INPUT_INVALID',
});

function lineOf(fs: readonly Finding[]): ScanLine {
  return {
    ...verdictOf(fs),
    findings: fs
      .filter((f) => f.detector !== 'composite')
      .map((f) => ({
        detector: f.detector,
        flagged: f.flagged,
        score: Number(f.score.toFixed(4)),
        threshold: Number.isFinite(f.threshold) ? Number(f.threshold.toFixed(4)) : null,
        reason: f.reason,
      })),
  };
}

const isTier = (t: unknown): t is SourceTier =>
  typeof t === 'string' && (SourceTiers as readonly string[]).includes(t);

/** Build the pipeline `scan` uses for these options (calibrated when a baseline is given). */
export async function scanPipeline(o: ScanOptions): Promise<DetectionPipeline> {
  const calibrated = o.baseline !== undefined && o.baseline.length > 0;
  const p = new DetectionPipeline(o.embedder, {
    memsad: calibrated && o.queries !== undefined && o.queries.length > 0 ? {} : false,
    ngram: calibrated ? {} : false,
    proactive: calibrated ? {} : false,
    ...(o.watermarkKey === undefined ? {} : { watermark: { key: o.watermarkKey } }),
    exemptTiers: [],
  });
  if (calibrated)
    await p.calibrate(o.baseline ?? [], o.queries === undefined ? {} : { queries: o.queries });
  return p;
}

/** Scan JSONL lines; one verdict line out per line in (blank lines skipped). */
export async function scanLines(
  lines: AsyncIterable<string> | Iterable<string>,
  o: ScanOptions,
  write: (line: string) => void,
): Promise<{ lines: number; flagged: number }> {
  const p = await scanPipeline(o);
  let n = 0;
  let flagged = 0;
  for await (const raw of lines) {
    if (raw.trim().length === 0) continue;
    n++;
    const out = await scanOne(p, raw, o);
    if (out.flagged) flagged++;
    write(JSON.stringify(out));
  }
  return { lines: n, flagged };
}

async function scanOne(p: DetectionPipeline, raw: string, o: ScanOptions): Promise<ScanLine> {
  let rec: unknown;
  try {
    rec = JSON.parse(raw);
  } catch {
    return invalid();
  }
  if (
    typeof rec !== 'object' ||
    rec === null ||
    typeof (rec as { text?: unknown }).text !== 'string'
  )
    return invalid();
  const r = rec as { text: string; tier?: unknown; query?: unknown; embedding?: unknown };
  const tier = isTier(r.tier) ? r.tier : o.principalTier;
  if (o.stage === 'write') return lineOf(await p.screenWrite({ content: r.text, tier }));
  let q: Float32Array = new Float32Array(0);
  let e: Float32Array = new Float32Array(0);
  if (typeof r.query === 'string') {
    const stored = Array.isArray(r.embedding) && r.embedding.every((x) => typeof x === 'number');
    const vs = await p.embedder.embed(stored ? [r.query] : [r.query, r.text]);
    q = vs[0] ?? q;
    e = stored ? Float32Array.from(r.embedding as number[]) : (vs[1] ?? e);
  }
  return lineOf(
    await p.scoreRead({
      content: r.text,
      tier,
      queryEmbedding: q,
      entryEmbedding: e,
      ...(typeof r.query === 'string' ? { query: r.query } : {}),
    }),
  );
}

function readTexts(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => {
      try {
        const v = JSON.parse(l) as unknown;
        return typeof v === 'string'
          ? v
          : typeof (v as { text?: unknown }).text === 'string'
            ? (v as { text: string }).text
            : '';
      } catch {
        return l;
      }
    })
    .filter((t) => t.length > 0);
}

export function registerScan(program: Command): Command {
  return program
    .command('scan')
    .description(
      'screen JSONL lines {"text": …} from stdin with the detection pipeline; JSONL verdicts on stdout',
    )
    .addOption(
      new Option('--stage <stage>', 'write-time or read-time screening')
        .choices(['write', 'read'])
        .default('write'),
    )
    .addOption(
      new Option(
        '--tier <tier>',
        'screen each line as a write of this tier (a line may carry "tier")',
      ).choices([...SourceTiers]),
    )
    .addOption(
      new Option('--principal-tier <tier>', 'same as --tier (older name)')
        .choices([...SourceTiers])
        .default('USER_OBSERVED'),
    )
    .addOption(
      new Option('--embedder <kind>', 'embedding model')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option(
      '--baseline <file>',
      'JSONL of benign entries to calibrate MemSAD+ / proactive / MemSAD',
    )
    .option('--queries <file>', 'JSONL of recent queries: MemSAD history (needs --baseline)')
    .addOption(
      new Option('--watermark-key <key>', 'ingestion watermark key').env('MEMWARDEN_WATERMARK_KEY'),
    )
    .action(
      async (o: {
        stage: 'write' | 'read';
        tier?: SourceTier;
        principalTier: SourceTier;
        embedder: string;
        baseline?: string;
        queries?: string;
        watermarkKey?: string;
      }) => {
        const embedder =
          o.embedder === 'deterministic'
            ? new DeterministicEmbedder(384)
            : new LocalMiniLmEmbedder();
        const rl = createInterface({
          input: process.stdin === undefined ? createReadStream('/dev/null') : process.stdin,
          crlfDelay: Infinity,
        });
        const res = await scanLines(
          rl,
          {
            stage: o.stage,
            principalTier: o.tier ?? o.principalTier,
            embedder,
            ...(o.baseline === undefined ? {} : { baseline: readTexts(o.baseline) }),
            ...(o.queries === undefined ? {} : { queries: readTexts(o.queries) }),
            ...(o.watermarkKey === undefined ? {} : { watermarkKey: o.watermarkKey }),
          },
          (l) => process.stdout.write(`${l}\n`),
        );
        process.stderr.write(`scan: ${res.lines} lines, ${res.flagged} flagged\n`);
      },
    );
}
