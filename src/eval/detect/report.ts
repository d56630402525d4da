/**
 * @module eval/detect/report
 * Renderers for the detection evaluation: a plain-text summary (stdout) and a self-contained
 * HTML report with the attack × defence matrix, ROC curves as inline SVG, the synonym
 * evasion table and the compound-exposure view.
 */
import type { Interval } from './metrics.js';
import { type DetectEvalReport, PAPER } from './run.js';

const f3 = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '—');
const ci = (i: Interval | undefined): string =>
  i === undefined ? '—' : `${f3(i.mean)} [${f3(i.lo)}, ${f3(i.hi)}]`;
const esc = (s: string): string =>
  s.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
const inf = (x: number): string => (Number.isFinite(x) ? String(x) : '∞');

/** Headline numbers against the paper's (issue 7 targets). */
export function headline(
  r: DetectEvalReport,
): { name: string; ours: number; paper: string; ok: boolean }[] {
  const cell = (a: string, d: string) => r.matrix.find((m) => m.attack === a && m.defence === d);
  const au = (a: string, d: string) => cell(a, d)?.auroc?.mean ?? Number.NaN;
  const comp = r.matrix.filter((m) => m.defence === 'composite');
  const compAuto = r.matrix.filter((m) => m.defence === 'composite_auto');
  const minT = (xs: typeof comp) => Math.min(...xs.map((m) => m.tpr.mean));
  const maxF = (xs: typeof comp) => Math.max(...xs.map((m) => m.fpr.mean));
  return [
    {
      name: 'MemSAD AUROC, MINJA',
      ours: au('minja', 'memsad'),
      paper: `≥ ${PAPER.memsadAuroc.minja}`,
      ok: au('minja', 'memsad') >= PAPER.memsadAuroc.minja,
    },
    {
      name: 'MemSAD AUROC, InjecMEM',
      ours: au('injecmem', 'memsad'),
      paper: `≥ ${PAPER.memsadAuroc.injecmem}`,
      ok: au('injecmem', 'memsad') >= PAPER.memsadAuroc.injecmem,
    },
    {
      name: 'MemSAD AUROC, AgentPoison (triggered cal.)',
      ours: au('agentpoison', 'memsad'),
      paper: '1.000',
      ok: au('agentpoison', 'memsad') >= 0.999,
    },
    {
      name: 'Composite (W ∨ MemSAD ∨ proactive) min TPR',
      ours: minT(comp),
      paper: '1.00',
      ok: minT(comp) >= 1,
    },
    {
      name: 'Composite (W ∨ MemSAD ∨ proactive) max FPR',
      ours: maxF(comp),
      paper: '≤ 0.01',
      ok: maxF(comp) <= 0.01,
    },
    {
      name: 'Composite without watermark (auto-storage) min TPR',
      ours: minT(compAuto),
      paper: '— (ours)',
      ok: minT(compAuto) >= 1,
    },
    {
      name: 'Composite without watermark (auto-storage) max FPR',
      ours: maxF(compAuto),
      paper: '— (ours)',
      ok: maxF(compAuto) <= 0.01,
    },
    ...defaultRows(r),
  ];
}

/** The shipped default (gated MemSAD+, shipped κ) in both regimes, and through Memory.add. */
function defaultRows(r: DetectEvalReport): { name: string; ours: number; paper: string; ok: boolean }[] {
  const rows: { name: string; ours: number; paper: string; ok: boolean }[] = [];
  for (const [label, m] of [
    ['paper history', r.matrix],
    ['mixed history', r.mixed],
  ] as const) {
    const d = m.filter((x) => x.defence === 'composite_default');
    if (d.length === 0) continue;
    const t = Math.min(...d.map((x) => x.tpr.mean));
    const f = Math.max(...d.map((x) => x.fpr.mean));
    rows.push(
      { name: `Shipped default composite, ${label}: min TPR`, ours: t, paper: '— (ours)', ok: t >= 1 },
      { name: `Shipped default composite, ${label}: max FPR (held-out)`, ours: f, paper: '≤ 0.01', ok: f <= 0.01 },
    );
  }
  const w = r.workload;
  if (w !== undefined) {
    rows.push({
      name: 'Memory.add false-review rate (mixed benign workload)',
      ours: w.overall.falseReviewRate,
      paper: '≤ 0.01 (ours)',
      ok: w.overall.falseReviewRate <= 0.01,
    });
  }
  return rows;
}

export function textSummary(r: DetectEvalReport): string {
  const lines = [
    `memwarden eval detect — embedder ${r.embedder}, ${r.config.seeds} seeds, ${r.config.benign} benign (${r.config.reference} reference, ${r.config.tuning} tuning, ${r.config.heldOutBenign} held out), ${r.config.historyQueries} benign queries in the MemSAD history; κ ${r.config.kappa === undefined ? `tuned per seed on the tuning split (FPR ≤ ${r.config.targetFpr})` : `fixed ${r.config.kappa}`}; every FPR / AUROC on the held-out split`,
  ];
  lines.push(
    '',
    'attack       defence            TPR                    FPR                    AUROC',
  );
  for (const m of r.matrix)
    lines.push(
      `${m.attack.padEnd(12)} ${m.defence.padEnd(18)} ${ci(m.tpr).padEnd(22)} ${ci(m.fpr).padEnd(22)} ${ci(m.auroc)}`,
    );
  if (r.mixed.length > 0) {
    lines.push('', `mixed history regime (victim queries + ${r.config.mixedHistoryQueries} benign user queries)`);
    for (const m of r.mixed)
      lines.push(
        `${m.attack.padEnd(12)} ${m.defence.padEnd(18)} ${ci(m.tpr).padEnd(22)} ${ci(m.fpr).padEnd(22)} ${ci(m.auroc)}`,
      );
  }
  lines.push('', 'κ tuned on the tuning split (benign only); shipped κ and its held-out FPR');
  for (const k of r.kappas)
    lines.push(
      `  ${k.regime.padEnd(6)} ${k.detector.padEnd(12)} κ ${k.mean.toFixed(2)} [${k.min.toFixed(2)}, ${k.max.toFixed(2)}] tune-FPR ${f3(k.tuneFpr)} | shipped κ ${k.shipped} held-out FPR ${f3(k.shippedHeldOutFpr)}`,
    );
  const w = r.workload;
  if (w !== undefined) {
    lines.push('', `Memory.add workload (default autoDetection, ${w.principalWrites} benign writes, ${w.searches} searches; minOwn ${w.minOwn})`);
    for (const [name, ph] of [
      ['cold start', w.coldStart],
      ['warm', w.warm],
      ['overall', w.overall],
      ...Object.entries(w.byKind),
    ] as const)
      lines.push(
        `  ${name.padEnd(10)} writes ${ph.writes} stored ${ph.stored} held ${ph.held} (false-review ${f3(ph.falseReviewRate)}) near-dup ${ph.nearDuplicate} ${JSON.stringify(ph.reasons)}`,
      );
    for (const a of w.attacks)
      lines.push(`  attack ${a.attack.padEnd(12)} poisons ${a.poisons} held ${a.held} (TPR ${f3(a.tpr)}) near-dup ${a.nearDuplicate} ${JSON.stringify(a.reasons)}`);
  }
  lines.push('', 'headline vs paper');
  for (const h of headline(r))
    lines.push(`  ${h.ok ? 'MEET' : 'MISS'}  ${h.name}: ${f3(h.ours)} (paper ${h.paper})`);
  lines.push(
    '',
    'synonym evasion (white-box, seed 0): attack entries memsad-evasion memsad+-evasion subs/entry sim-ratio',
  );
  for (const s of r.synonym)
    lines.push(
      `  ${s.attack.padEnd(12)} ${s.entries} ${f3(s.memsadEvasion)} ${f3(s.memsadPlusEvasion)} ${s.subsPerEntry.toFixed(1)} ${f3(s.simRatio)}`,
    );
  lines.push(
    '',
    'compound exposure: attack ASR-R defended-ASR-R sessions→50% sessions→90% defended→90%',
  );
  for (const c of r.compound)
    lines.push(
      `  ${c.attack.padEnd(12)} ${f3(c.asrR)} ${f3(c.asrRDefended)} ${inf(c.sessionsTo50)} ${inf(c.sessionsTo90)} ${inf(c.sessionsTo90Defended)}`,
    );
  lines.push(
    '',
    `time ${(r.timing.totalMs / 1000).toFixed(1)} s (model ${(r.timing.modelMs / 1000).toFixed(1)} s, ${r.timing.embedded} embedded, ${r.timing.cached} from cache)`,
  );
  return lines.join('\n');
}

const COLORS: Record<string, string> = {
  memsad: '#d62728',
  memsad_plain: '#ff9896',
  memsad_plus: '#9467bd',
  memsad_plus_gated: '#c5b0d5',
  proactive: '#2ca02c',
  validation: '#8c564b',
  watermark: '#1f77b4',
};

function rocSvg(r: DetectEvalReport, attack: string): string {
  const W = 280;
  const P = 30;
  const x = (v: number) => P + v * (W - 2 * P);
  const y = (v: number) => W - P - v * (W - 2 * P);
  const curves = r.roc.filter((c) => c.attack === attack);
  const paths = curves
    .map(
      (c) =>
        `<polyline fill="none" stroke="${COLORS[c.defence] ?? '#333'}" stroke-width="1.6" points="${c.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ')}"><title>${c.defence} AUROC ${f3(c.auroc)}</title></polyline>`,
    )
    .join('');
  const legend = curves
    .map(
      (c, i) =>
        `<text x="${P + 95}" y="${y(0) - 8 - i * 12}" font-size="9" fill="${COLORS[c.defence] ?? '#333'}">${c.defence} ${f3(c.auroc)}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${W}" role="img" aria-label="ROC ${attack}">
<rect x="${P}" y="${P}" width="${W - 2 * P}" height="${W - 2 * P}" fill="none" stroke="#999"/>
<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#ccc" stroke-dasharray="3 3"/>
${paths}${legend}
<text x="${W / 2}" y="${W - 6}" font-size="10" text-anchor="middle">FPR</text>
<text x="10" y="${W / 2}" font-size="10" transform="rotate(-90 10 ${W / 2})" text-anchor="middle">TPR</text>
<text x="${W / 2}" y="16" font-size="11" text-anchor="middle">${esc(attack)} (seed 0)</text></svg>`;
}

export function htmlReport(r: DetectEvalReport): string {
  const rows = r.matrix
    .map(
      (m) =>
        `<tr><td>${m.attack}</td><td>${m.defence}</td><td>${ci(m.tpr)}</td><td>${ci(m.fpr)}</td><td>${ci(m.auroc)}</td></tr>`,
    )
    .join('');
  const head = headline(r)
    .map(
      (h) =>
        `<tr class="${h.ok ? 'ok' : 'miss'}"><td>${esc(h.name)}</td><td>${f3(h.ours)}</td><td>${esc(h.paper)}</td><td>${h.ok ? 'meets' : 'short'}</td></tr>`,
    )
    .join('');
  const syn = r.synonym
    .map(
      (s) =>
        `<tr><td>${s.attack}</td><td>${s.entries}</td><td>${f3(s.memsadEvasion)}</td><td>${f3(s.memsadPlusEvasion)}</td><td>${s.subsPerEntry.toFixed(1)}</td><td>${f3(s.simRatio)}</td></tr>`,
    )
    .join('');
  const comp = r.compound
    .map(
      (c) =>
        `<tr><td>${c.attack}</td><td>${f3(c.asrR)}</td><td>${f3(c.asrRDefended)}</td><td>${inf(c.sessionsTo50)}</td><td>${inf(c.sessionsTo90)}</td><td>${inf(c.sessionsTo90Defended)}</td></tr>`,
    )
    .join('');
  const mixedRows = r.mixed
    .map(
      (m) =>
        `<tr><td>${m.attack}</td><td>${m.defence}</td><td>${ci(m.tpr)}</td><td>${ci(m.fpr)}</td><td>${ci(m.auroc)}</td></tr>`,
    )
    .join('');
  const kap = r.kappas
    .map(
      (k) =>
        `<tr><td>${k.regime}</td><td>${k.detector}</td><td>${k.mean.toFixed(2)} [${k.min.toFixed(2)}, ${k.max.toFixed(2)}]</td><td>${f3(k.tuneFpr)}</td><td>${k.shipped}</td><td>${f3(k.shippedHeldOutFpr)}</td></tr>`,
    )
    .join('');
  const w = r.workload;
  const wl =
    w === undefined
      ? '<p>(not run)</p>'
      : `<table><tr><th>phase</th><th>writes</th><th>stored</th><th>held (false reviews)</th><th>false-review rate</th><th>near-duplicate</th><th>reasons</th></tr>${[
          ['cold start', w.coldStart],
          ['warm', w.warm],
          ['overall', w.overall],
          ...Object.entries(w.byKind),
        ]
          .map(
            ([n, p]) =>
              `<tr><td>${esc(String(n))}</td><td>${(p as typeof w.overall).writes}</td><td>${(p as typeof w.overall).stored}</td><td>${(p as typeof w.overall).held}</td><td>${f3((p as typeof w.overall).falseReviewRate)}</td><td>${(p as typeof w.overall).nearDuplicate}</td><td><code>${esc(JSON.stringify((p as typeof w.overall).reasons))}</code></td></tr>`,
          )
          .join('')}</table>
<table><tr><th>attack</th><th>poisons</th><th>held</th><th>TPR</th><th>near-duplicate</th><th>reasons</th></tr>${w.attacks
          .map(
            (a) =>
              `<tr><td>${a.attack}</td><td>${a.poisons}</td><td>${a.held}</td><td>${f3(a.tpr)}</td><td>${a.nearDuplicate}</td><td><code>${esc(JSON.stringify(a.reasons))}</code></td></tr>`,
          )
          .join('')}</table>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — detection evaluation</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}.ok td:last-child{color:#080}.miss td:last-child{color:#b00}.rocs{display:flex;gap:1em;flex-wrap:wrap}</style></head><body>
<h1>Write-time detection: attack × defence</h1>
<p>Embedder <code>${esc(r.embedder)}</code>; ${r.config.seeds} seeds; benign corpus ${r.config.benign} entries over 7 categories split per seed into ${r.config.reference} reference (calibration), ${r.config.tuning} tuning (κ chosen there, benign only, FPR ≤ ${r.config.targetFpr} per detector) and ${r.config.heldOutBenign} held out (every FPR and AUROC below)${r.config.kappa === undefined ? '' : `; MemSAD κ fixed at ${r.config.kappa}`}; MemSAD history = victim queries + ${r.config.historyQueries} benign user queries. Intervals: percentile bootstrap 95 % over seeds. AgentPoison triggers: ${r.triggers.map((t) => `<code>${esc(t)}</code>`).join(', ')}.</p>
<h2>Against the paper</h2><table><tr><th>figure</th><th>ours</th><th>paper</th><th></th></tr>${head}</table>
<p><code>memsad</code> is calibrated on the queries actually asked (triggered ones for AgentPoison: triggered calibration); <code>memsad_plain</code> uses the untriggered victim queries. <code>composite</code> = watermark ∨ MemSAD ∨ proactive (App. C); <code>composite_auto</code> = MemSAD ∨ MemSAD+ ∨ proactive ∨ validation, the portfolio left when auto-storage bypasses the watermarking ingestion path; <code>composite_default</code> = the shipped default (gated MemSAD+, shipped κ). <code>memsad_plus_gated</code> = MemSAD ∨ (MemSAD+ lexical ∧ MemSAD z ≥ gate).</p>
<h2>ROC curves</h2><div class="rocs">${['agentpoison', 'minja', 'injecmem'].map((a) => rocSvg(r, a)).join('')}</div>
<h2>Matrix (Table 3)</h2><table><tr><th>attack</th><th>defence</th><th>TPR</th><th>FPR</th><th>AUROC</th></tr>${rows}</table>
<h2>Mixed history (the realistic regime)</h2><p>MemSAD's history = the victim queries plus ${r.config.mixedHistoryQueries} benign user queries: benign entries then also sit near recent queries, and MemSAD alone loses most of its separation. <code>composite_default</code> is what <code>Memory.open</code> ships: MemSAD ∨ gated MemSAD+ (lexical flag counts when MemSAD's z ≥ ${r.config.gate}) ∨ proactive ∨ validation at the shipped κ.</p><table><tr><th>attack</th><th>defence</th><th>TPR</th><th>FPR</th><th>AUROC</th></tr>${mixedRows}</table>
<h2>κ: tuned on the tuning split, shipped, held-out FPR</h2><table><tr><th>regime</th><th>detector</th><th>tuned κ (mean [min, max] over seeds)</th><th>tuning FPR</th><th>shipped κ</th><th>held-out FPR at shipped κ</th></tr>${kap}</table>
<h2>The shipped default through Memory.add</h2><p>A <code>Memory</code> with default <code>autoDetection</code> and this embedder; one user principal; held-out benign texts of seed 0 as facts (three tiers), JSON values and short notes, one search from the benign query set every two writes; then the victim queries and the poisons (tier USER_OBSERVED). Every held benign write is a false review.</p>${wl}
<h2>Synonym substitution (§6.4, App. R)</h2><table><tr><th>attack</th><th>entries</th><th>MemSAD evasion</th><th>MemSAD+ evasion</th><th>subs / entry</th><th>retrieval sim ratio</th></tr>${syn}</table>
<h2>Compound exposure (App. S)</h2><p>ASR-R at k = 5 over the reference corpus; P(compromise by session s) = 1 − (1 − ASR-R)^s; defended = poisons flagged by <code>composite_default</code> removed.</p>
<table><tr><th>attack</th><th>ASR-R</th><th>defended ASR-R</th><th>sessions → 50 %</th><th>sessions → 90 %</th><th>defended → 90 %</th></tr>${comp}</table>
<p>Run time ${(r.timing.totalMs / 1000).toFixed(1)} s; model ${(r.timing.modelMs / 1000).toFixed(1)} s for ${r.timing.embedded} texts, ${r.timing.cached} from the disk cache.</p>
</body></html>`;
}
