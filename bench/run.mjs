#!/usr/bin/env node
/**
 * `npm run bench [-- --json] [-- --only GROUP]`: the benchmark command.
 * Prints a readable table, or exactly one JSON object `{ figures, ratios, machine }` with --json.
 * Progress goes to stderr so stdout stays machine-readable.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';

const GROUPS = {
  core: () => import('./core.mjs'),
  gate: () => import('./gate.mjs'),
  smsr: () => import('./smsr.mjs'),
  'smoothed-search': () => import('./smoothed-search.mjs'),
  store: () => import('./store.mjs'),
  detect: () => import('./detect.mjs'),
  'write-cpu': () => import('./write-cpu.mjs'),
  graph: () => import('./graph.mjs'),
  load: () => import('./load.mjs'),
  'load-pg': () => import('./load-pg.mjs'),
  vector: () => import('./vector.mjs'),
  partition: () => import('./partition.mjs'),
  'pglite-worker': () => import('./pglite-worker.mjs'),
  conversation: () => import('./conversation.mjs'),
  'serve-startup': () => import('./serve-startup.mjs'),
};

const { values } = parseArgs({
  options: { json: { type: 'boolean', default: false }, only: { type: 'string' } },
  allowPositionals: false,
});

const selected = values.only ? values.only.split(',') : Object.keys(GROUPS);
for (const g of selected) {
  if (!(g in GROUPS)) {
    console.error(`unknown group "${g}"; known: ${Object.keys(GROUPS).join(', ')}`);
    process.exit(2);
  }
}

const figures = {};
const ratios = {};
const targets = [];
for (const g of selected) {
  process.stderr.write(`bench: running group ${g}…\n`);
  const mod = await GROUPS[g]();
  const out = await mod.run({ log: (m) => process.stderr.write(`  ${g}: ${m}\n`) });
  Object.assign(figures, out.figures);
  Object.assign(ratios, out.ratios);
  targets.push(...(out.targets ?? []));
}

const machine = {
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  totalMemGiB: Math.round(os.totalmem() / 2 ** 30),
  platform: `${os.platform()}-${os.arch()}`,
};

if (values.json) {
  process.stdout.write(JSON.stringify({ figures, ratios, targets, machine }) + '\n');
} else {
  const rows = [
    ...Object.entries(figures).map(([k, v]) => ['figure', k, v]),
    ...Object.entries(ratios).map(([k, v]) => ['ratio', k, v]),
  ];
  const w = Math.max(...rows.map((r) => r[1].length));
  console.log(`memwarden bench — ${machine.cpuModel}, ${machine.cpus} cores, node ${machine.node}`);
  for (const [kind, k, v] of rows) console.log(`${kind.padEnd(7)} ${k.padEnd(w)}  ${v}`);
  if (targets.length > 0) {
    console.log('\ntargets');
    for (const t of targets)
      console.log(`  ${t.ok ? 'PASS' : 'MISS'}  ${t.name}: ${t.value} ${t.op} ${t.limit}`);
  }
}
