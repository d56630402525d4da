/**
 * Group `conversation` (issue 20): writing a conversation through `add(messages)` into a
 * default embedded memwarden (PGlite, read model, detection on) — the target is a 600-turn
 * conversation in ≤ 30 s with the local model, i.e. ≥ 20 turns/s.
 *
 * A seeded synthetic conversation (two speakers, ~100-character turns like LoCoMo's, sessions
 * of 24 turns, each with its own date) is written session by session:
 * - with the local model (all-MiniLM-L6-v2): `CONV_MODEL_TURNS` turns (default 96; the whole
 *   600 would take this group past a minute on this machine) — `conv_turns_per_s` and the
 *   600-turn time it implies, `conv_600_turns_s`;
 * - with the deterministic embedder: all 600 turns — memwarden's own cost per turn without the
 *   model (`conv_write_only_turns_per_s`), and the embedding model's share of a turn's time
 *   (`conv_model_share`).
 * Also the model's own rate on the same texts (`conv_embed_texts_per_s`): the bound the write
 * rate cannot pass.
 *
 * `MEMWARDEN_BENCH_BASELINE=<old dist>` also times the old build's model and conversation
 * write on the same texts in the same run, alternating old and new (`CONV_ROUNDS` rounds,
 * default 1; the best round of each counts): `conv_new_over_baseline` is the write-rate ratio.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Memory } from '../dist/index.js';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../dist/adapters/embeddings/index.js';
import { mulberry32, round } from './lib.mjs';

const TURNS = 600;
const MODEL_TURNS = Number(process.env.CONV_MODEL_TURNS ?? 96);
const SESSION = 24;
const ROUNDS = Number(process.env.CONV_ROUNDS ?? 1);

const SUBJECTS = [
  'my sister',
  'the new job',
  'our trip to Lisbon',
  'the garden',
  'my painting class',
  'the book club',
  'the dog',
  'marathon training',
  'the kitchen renovation',
  'my grandmother',
];
const VERBS = [
  'was amazing',
  'took longer than expected',
  'reminded me of last summer',
  'finally worked out',
  'made me really happy',
  'was a bit stressful',
  'is going well so far',
];
const TAILS = [
  'How about you?',
  'I will tell you more next week.',
  'We should plan something together.',
  'It was on Saturday.',
  'I took a few photos.',
  'Thanks for asking!',
];

function conversation(n) {
  const r = mulberry32(20);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  return Array.from({ length: n }, (_, i) => ({
    role: 'user',
    name: i % 2 === 0 ? 'Caroline' : 'Melanie',
    content: `Hey! ${pick(SUBJECTS)} ${pick(VERBS)}, and ${pick(SUBJECTS)} ${pick(VERBS)}. ${pick(TAILS)} (${i})`,
    eventAt: new Date(
      Date.UTC(2023, 4, 8) + Math.floor(i / SESSION) * 86_400_000 * 3,
    ).toISOString(),
    metadata: { dia_id: `D${Math.floor(i / SESSION) + 1}:${(i % SESSION) + 1}` },
  }));
}

async function write(embedder, turns, M = Memory) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mw-bench-conv-'));
  const mem = await M.open({ dataDir: dir, ephemeral: true, embedder });
  try {
    const { id: principal } = await mem.createPrincipal('user', 'bench');
    // Warm: the model's load and the first PGlite statements are not the write rate.
    await mem.add([{ role: 'user', content: 'warm up' }], { principal, runId: 'warm' });
    const t0 = performance.now();
    for (let i = 0; i < turns.length; i += SESSION) {
      await mem.add(turns.slice(i, i + SESSION), { principal, infer: false });
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await mem.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function embedRate(embedder, texts) {
  const t0 = performance.now();
  await embedder.embed(texts);
  return texts.length / ((performance.now() - t0) / 1000);
}

export async function run({ log }) {
  const turns = conversation(TURNS);
  const texts = turns.slice(0, 48).map((t) => `${t.name}: ${t.content}`);
  const local = new LocalMiniLmEmbedder();
  await local.warm();
  const baseDir = process.env.MEMWARDEN_BENCH_BASELINE;
  let old;
  if (baseDir) {
    const OM = await import(pathToFileURL(`${baseDir}/index.js`).href);
    const OE = await import(pathToFileURL(`${baseDir}/adapters/embeddings/index.js`).href);
    old = { Memory: OM.Memory, embedder: new OE.LocalMiniLmEmbedder() };
    await old.embedder.warm();
    log(`baseline: ${baseDir}`);
  }
  const best = { embed: 0, slow: Infinity, oldEmbed: 0, oldSlow: Infinity };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which build goes first, so a load swing does not favour one.
    const steps = [
      async () => {
        best.embed = Math.max(best.embed, await embedRate(local, texts));
        const s = await write(local, turns.slice(0, MODEL_TURNS));
        best.slow = Math.min(best.slow, s);
        log(`round ${r + 1}: ${MODEL_TURNS} turns, all-MiniLM-L6-v2: ${round(s)} s`);
      },
    ];
    if (old)
      steps.push(async () => {
        best.oldEmbed = Math.max(best.oldEmbed, await embedRate(old.embedder, texts));
        const s = await write(old.embedder, turns.slice(0, MODEL_TURNS), old.Memory);
        best.oldSlow = Math.min(best.oldSlow, s);
        log(`round ${r + 1}: ${MODEL_TURNS} turns, baseline build: ${round(s)} s`);
      });
    if (r % 2 === 1) steps.reverse();
    for (const step of steps) await step();
  }
  const embedPerS = best.embed;
  log(`model alone: ${round(embedPerS)} texts/s`);
  const fast = await write(new DeterministicEmbedder(384), turns);
  log(`${TURNS} turns, deterministic embedder: ${round(fast)} s`);
  const slow = best.slow;
  const perS = MODEL_TURNS / slow;
  const writeOnly = TURNS / fast;
  const figures = {
    conv_turns_per_s: round(perS),
    conv_600_turns_s: round(TURNS / perS),
    conv_write_only_turns_per_s: round(writeOnly),
    conv_embed_texts_per_s: round(embedPerS),
  };
  const ratios = {
    // The share of a turn's write time the model takes (1 − memwarden's own share).
    conv_model_share: round(1 - perS / writeOnly),
    conv_turns_over_model_rate: round(perS / embedPerS),
  };
  if (old) {
    figures.conv_baseline_turns_per_s = round(MODEL_TURNS / best.oldSlow);
    figures.conv_baseline_600_turns_s = round((TURNS * best.oldSlow) / MODEL_TURNS);
    figures.conv_baseline_embed_texts_per_s = round(best.oldEmbed);
    ratios.conv_new_over_baseline = round(best.oldSlow / slow);
    ratios.conv_embed_new_over_baseline = round(embedPerS / best.oldEmbed);
  }
  const targets = [
    { name: 'conv_600_turns_s', value: figures.conv_600_turns_s, op: '<=', limit: 30 },
  ].map((t) => ({ ...t, ok: t.value <= t.limit }));
  return { figures, ratios, targets };
}
