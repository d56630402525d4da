/**
 * @module eval/injections/report
 * Renderers for `memwarden eval injections`: a plain-text summary (stdout, `summary.txt`) and a
 * self-contained HTML report with one ROC curve per tier as inline SVG (the way
 * eval/detect/report draws its curves), the headline against the issue's targets, the
 * per-source and per-category tables with cross-validated figures beside the in-sample ones,
 * the keyword baseline, PoisonedRAG apart, and what each detector contributes.
 */
import type { Interval } from '../../core/smsr/stats.js';
import type { ScreenedTier } from '../../core/detect/index.js';
import { type InjectionsEvalReport, type RocCurve, TIERS } from './run.js';

const f3 = (x: number | undefined): string =>
  x !== undefined && Number.isFinite(x) ? x.toFixed(3) : '—';
const f4 = (x: number | undefined): string =>
  x !== undefined && Number.isFinite(x) ? x.toFixed(4) : '—';
const esc = (s: string): string =>
  s.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
const SHORT: Record<ScreenedTier, string> = {
  EXTERNAL_WEB: 'ext-web',
  EXTERNAL_TOOL: 'ext-tool',
  USER_OBSERVED: 'user-obs',
  USER_VERIFIED: 'user-ver',
};

const ci = (i: Interval): string => `${f4(i.rate)} [${f4(i.lower)}, ${f4(i.upper)}]`;

/** The default stack per tier (what a user's write meets) beside the screen alone. */
function stackSummary(r: InjectionsEvalReport): string[] {
  const s = r.stack;
  const L: string[] = [
    '',
    `default detection stack (markers, validation, instruction screen, MemSAD, MemSAD+, probes at the tier's policy) — what a write meets; held-out = folds ${s.heldOut.folds.join(', ')} of ${s.heldOut.of} by text hash (${s.heldOut.rows} rows), never used to tune the probes`,
  ];
  for (const st of s.states) L.push(`  ${st.name}: ${st.description}`);
  L.push(
    '  state split    tier           stack instr-TPR [95% CI]   stack benign-FPR [95% CI]  target  | screen alone TPR / FPR | benign held by',
  );
  for (const t of s.tiers)
    L.push(
      `  ${t.ok ? 'MEET' : 'MISS'} ${t.state.padEnd(5)} ${t.split.padEnd(8)} ${t.tier.padEnd(14)} ${ci(t.instructionTpr).padEnd(26)} ${ci(t.benignFpr).padEnd(26)} ≤ ${String(t.fprTarget).padEnd(5)} | ${f4(t.screenInstructionTpr.rate)} / ${f4(t.screenBenignFpr.rate)}       | ${JSON.stringify(t.benignByDetector)}`,
    );
  L.push(
    '',
    'default stack per source corpus (flag rate: TPR for attacks, FPR for benign), tiers ext-web ext-tool user-obs user-ver — stack | screen alone',
  );
  for (const g of s.groups)
    L.push(
      `  ${g.state.padEnd(5)} ${g.group.padEnd(15)} ${g.label.padEnd(6)} n=${String(g.n).padEnd(5)} ${g.licence.padEnd(13)} ${TIERS.map((t) => f3(g.stack[t])).join(' ')} | ${TIERS.map((t) => f3(g.screen[t])).join(' ')}`,
    );
  L.push(
    '',
    "probes per tier: the instruction-score floor above which the probes' flag counts, tuned on the tuning split (lowest floor within the tier's FPR target) vs shipped",
  );
  for (const k of s.probes)
    L.push(
      `  ${k.state.padEnd(5)} ${k.tier.padEnd(14)} κ ${String(k.kappa).padEnd(8)} tuned floor ${String(k.tuned).padEnd(9)} (tune FPR ${f4(k.tuneFpr)}) | shipped ${(k.shipped === Number.POSITIVE_INFINITY ? 'never' : String(k.shipped)).padEnd(9)} tune FPR ${f4(k.shippedTuneFpr)}, held-out FPR ${ci(k.shippedHeldOut)}, held-out instr-TPR ${f4(k.shippedHeldOutTpr.rate)}`,
    );
  L.push(
    '',
    `USER_OBSERVED probe policy curve (ADR 0053): the stack with the probes at (κ, floor), tuning split (folds 0–2) | held-out (folds 3–4); target FPR ≤ 0.005; probe-only = tuning benign texts only the probes hold`,
    '  state κ    floor | tune FPR [95% CI]          tune instr-TPR probe-only | held-out FPR [95% CI]      held-out instr-TPR',
  );
  for (const c of s.curve)
    L.push(
      `  ${c.state.padEnd(5)} ${String(c.kappa).padEnd(4)} ${String(c.floor).padStart(5)} | ${ci(c.tuneFpr).padEnd(26)} ${f4(c.tuneInstrTpr.rate).padEnd(14)} ${String(c.tuneProbeOnly).padEnd(10)} | ${ci(c.heldOutFpr).padEnd(26)} ${f4(c.heldOutInstrTpr.rate)}`,
    );
  return L;
}

export function textSummary(r: InjectionsEvalReport): string {
  const L: string[] = [];
  L.push(
    `memwarden eval injections — embedder ${r.embedder}; screen ${r.model.version}; ${r.data.rows} rows: ${r.data.instructionAttacks} instruction-type attacks, ${r.data.falseFacts} false facts (PoisonedRAG, apart), ${r.data.benign} benign`,
    `thresholds (log-odds) ${TIERS.map((t) => `${t} ${r.model.thresholds[t].toFixed(2)}`).join(', ')}`,
    '',
    'headline (dev file, default settings)                      value   target    5-fold CV',
  );
  for (const h of r.headline)
    L.push(
      `  ${h.ok ? 'MEET' : 'MISS'}  ${h.name.padEnd(50)} ${f4(h.value).padEnd(7)} ${h.target.padEnd(9)} ${f4(h.cv)}`,
    );
  L.push(...stackSummary(r));
  L.push(
    '',
    'overall per tier: instruction TPR / false-fact TPR / benign FPR (without AgentDojo user prompts)',
  );
  for (const k of [...TIERS, 'keyword'] as const) {
    const o = r.overall[k];
    L.push(
      `  ${k.padEnd(14)} ${f3(o.instructionTpr)} / ${f3(o.falseFactTpr)} / ${f4(o.benignFpr)} (${f4(o.benignFprNoUserPrompts)})`,
    );
  }
  if (r.cvOverall !== undefined && r.losoOverall !== undefined) {
    L.push(
      '',
      'cross-validated: instruction TPR / benign FPR — 5-fold by text hash | leave-one-source-out',
    );
    for (const t of TIERS)
      L.push(
        `  ${t.padEnd(14)} ${f3(r.cvOverall[t].instructionTpr)} / ${f4(r.cvOverall[t].benignFpr)} | ${f3(r.losoOverall[t].instructionTpr)} / ${f4(r.losoOverall[t].benignFpr)}`,
      );
  }
  L.push(
    '',
    `per source (flag rate: TPR for attacks, FPR for benign) — in sample | 5-fold CV | leave-one-source-out; tiers ${TIERS.map((t) => SHORT[t]).join(' ')}`,
  );
  for (const g of r.groups) {
    const cells = (x: Record<ScreenedTier, number> | undefined): string =>
      x === undefined ? '—' : TIERS.map((t) => f3(x[t])).join(' ');
    L.push(
      `  ${g.group.padEnd(15)} ${g.label.padEnd(6)} n=${String(g.n).padEnd(5)} ${cells(g.inSample)} | ${cells(g.cv)} | ${cells(g.loso)} | keyword ${f3(g.keyword)}`,
    );
  }
  const c = r.contributions;
  if (c !== undefined) {
    L.push(
      '',
      `what each detector contributes (tier ${c.tier}; MemSAD / MemSAD+ / probes calibrated on ${c.reference} LoCoMo memories, history ${c.queries} LoCoMo questions)`,
      '  detector             instr-TPR false-fact-TPR benign-FPR only-catch benign flagged by source',
    );
    for (const d of c.rows)
      L.push(
        `  ${d.detector.padEnd(20)} ${f3(d.instructionTpr).padEnd(9)} ${f3(d.falseFactTpr).padEnd(14)} ${f4(d.benignFpr).padEnd(10)} ${String(d.onlyCatches).padEnd(10)} ${JSON.stringify(d.benignFlaggedByGroup)}`,
      );
  }
  L.push(
    '',
    `time ${(r.timing.totalMs / 1000).toFixed(1)} s (model ${(r.timing.modelMs / 1000).toFixed(1)} s, ${r.timing.embedded} embedded, ${r.timing.cached} from cache); content screening ${r.timing.screenUsPerWrite.toFixed(0)} µs per write`,
  );
  return L.join('\n');
}

function rocSvg(c: RocCurve): string {
  const W = 300;
  const P = 34;
  // The interesting region is the low-FPR corner: the x axis is FPR on a 0–0.1 scale.
  const XMAX = 0.1;
  const x = (v: number): number => P + (Math.min(v, XMAX) / XMAX) * (W - 2 * P);
  const y = (v: number): number => W - P - v * (W - 2 * P);
  const pts = c.points.filter(([a]) => a <= XMAX + 1e-9);
  const line = pts.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  const ticks = [0, 0.02, 0.04, 0.06, 0.08, 0.1]
    .map(
      (t) => `<text x="${x(t)}" y="${W - P + 12}" font-size="8" text-anchor="middle">${t}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${W}" role="img" aria-label="ROC ${c.tier}">
<rect x="${P}" y="${P}" width="${W - 2 * P}" height="${W - 2 * P}" fill="none" stroke="#999"/>
<line x1="${x(0.02)}" y1="${y(0)}" x2="${x(0.02)}" y2="${y(1)}" stroke="#ddd" stroke-dasharray="3 3"/>
<line x1="${x(0)}" y1="${y(0.7)}" x2="${x(XMAX)}" y2="${y(0.7)}" stroke="#ddd" stroke-dasharray="3 3"/>
<polyline fill="none" stroke="#d62728" stroke-width="1.6" points="${line}"><title>instruction screen + rules, AUROC ${f3(c.auroc)}</title></polyline>
<circle cx="${x(c.operating.fpr)}" cy="${y(c.operating.tpr)}" r="4" fill="#d62728"><title>default threshold ${c.operating.threshold.toFixed(2)}: TPR ${f3(c.operating.tpr)} FPR ${f4(c.operating.fpr)}</title></circle>
<rect x="${x(c.keyword.fpr) - 3}" y="${y(c.keyword.tpr) - 3}" width="6" height="6" fill="#1f77b4"><title>keyword filter: TPR ${f3(c.keyword.tpr)} FPR ${f4(c.keyword.fpr)}</title></rect>
${ticks}
<text x="${W / 2}" y="${W - 6}" font-size="10" text-anchor="middle">FPR on benign (0–0.1)</text>
<text x="10" y="${W / 2}" font-size="10" transform="rotate(-90 10 ${W / 2})" text-anchor="middle">TPR, instruction attacks</text>
<text x="${W / 2}" y="16" font-size="11" text-anchor="middle">${esc(c.tier)} — AUROC ${f3(c.auroc)}</text>
<text x="${P + 40}" y="${y(0.16)}" font-size="9" fill="#d62728">● default: TPR ${f3(c.operating.tpr)}, FPR ${f4(c.operating.fpr)}</text>
<text x="${P + 40}" y="${y(0.08)}" font-size="9" fill="#1f77b4">■ keyword filter: TPR ${f3(c.keyword.tpr)}, FPR ${f4(c.keyword.fpr)}</text>
</svg>`;
}

export function htmlReport(r: InjectionsEvalReport): string {
  const head = r.headline
    .map(
      (h) =>
        `<tr class="${h.ok ? 'ok' : 'miss'}"><td>${esc(h.name)}</td><td>${f4(h.value)}</td><td>${esc(h.target)}</td><td>${f4(h.cv)}</td><td>${h.ok ? 'meets' : 'short'}</td></tr>`,
    )
    .join('');
  const tierCells = (x: Record<ScreenedTier, number> | undefined): string =>
    TIERS.map((t) => `<td>${x === undefined ? '—' : f3(x[t])}</td>`).join('');
  const groups = r.groups
    .map(
      (g) =>
        `<tr><td>${esc(g.group)}${g.falseFacts ? ' (false facts)' : ''}</td><td>${g.label}</td><td>${esc(g.role)}</td><td>${esc(g.licence)}</td><td>${g.n}</td>${tierCells(g.inSample)}${tierCells(g.cv)}${tierCells(g.loso)}<td>${f3(g.keyword)}</td></tr>`,
    )
    .join('');
  const cats = r.categories
    .map(
      (c) =>
        `<tr><td>${esc(c.category)}</td><td>${c.label}</td><td>${c.n}</td>${tierCells(c.tiers)}<td>${f3(c.keyword)}</td></tr>`,
    )
    .join('');
  const overall = ([...TIERS, 'keyword'] as const)
    .map((k) => {
      const o = r.overall[k];
      return `<tr><td>${k === 'keyword' ? 'keyword filter (baseline)' : k}</td><td>${f3(o.instructionTpr)}</td><td>${f4(o.benignFpr)}</td><td>${f4(o.benignFprNoUserPrompts)}</td><td>${f3(o.falseFactTpr)}</td><td>${k === 'keyword' ? '—' : f3(r.cvOverall?.[k].instructionTpr)}</td><td>${k === 'keyword' ? '—' : f4(r.cvOverall?.[k].benignFpr)}</td><td>${k === 'keyword' ? '—' : f3(r.losoOverall?.[k].instructionTpr)}</td><td>${k === 'keyword' ? '—' : f4(r.losoOverall?.[k].benignFpr)}</td></tr>`;
    })
    .join('');
  const c = r.contributions;
  const contrib =
    c === undefined
      ? '<p>(not run: pass <code>--locomo</code>)</p>'
      : `<p>Tier ${c.tier}. MemSAD, MemSAD+ (gated) and the proactive probes are calibrated as the default calibrates a principal: on ${c.reference} of its own memories (LoCoMo observations and dialogue turns not in the dev file) and a query history of ${c.queries} LoCoMo questions — real user queries, none a victim query. <em>only-catch</em>: instruction attacks no other detector flagged.</p><table><tr><th>detector</th><th>instruction TPR</th><th>false-fact TPR</th><th>benign FPR</th><th>only-catch</th><th>benign flagged, by source</th></tr>${c.rows
          .map(
            (d) =>
              `<tr><td>${esc(d.detector)}</td><td>${f3(d.instructionTpr)}</td><td>${f3(d.falseFactTpr)}</td><td>${f4(d.benignFpr)}</td><td>${d.onlyCatches}</td><td><code>${esc(JSON.stringify(d.benignFlaggedByGroup))}</code></td></tr>`,
          )
          .join('')}</table>`;
  const ciCell = (i: Interval): string =>
    `<td>${f4(i.rate)} <small>[${f4(i.lower)}, ${f4(i.upper)}]</small></td>`;
  const st = r.stack;
  const stackRows = st.tiers
    .map(
      (t) =>
        `<tr class="${t.ok ? 'ok' : 'miss'}"><td>${t.state}</td><td>${t.split}</td><td>${t.tier}</td>${ciCell(t.instructionTpr)}${ciCell(t.benignFpr)}<td>≤ ${t.fprTarget}</td><td>${f3(t.screenInstructionTpr.rate)}</td><td>${f4(t.screenBenignFpr.rate)}</td><td><code>${esc(JSON.stringify(t.benignByDetector))}</code></td><td>${t.ok ? 'meets' : 'short'}</td></tr>`,
    )
    .join('');
  const stackGroups = st.groups
    .map(
      (g) =>
        `<tr><td>${g.state}</td><td>${esc(g.group)}</td><td>${g.label}</td><td>${esc(g.licence)}</td><td>${g.n}</td>${tierCells(g.stack)}${tierCells(g.screen)}</tr>`,
    )
    .join('');
  const stackProbes = st.probes
    .map(
      (k) =>
        `<tr><td>${k.state}</td><td>${k.tier}</td><td>${k.kappa}</td><td>${k.tuned}</td><td>${f4(k.tuneFpr)}</td><td>${k.shipped === Number.POSITIVE_INFINITY ? 'never' : k.shipped}</td><td>${f4(k.shippedTuneFpr)}</td>${ciCell(k.shippedHeldOut)}<td>${f3(k.shippedHeldOutTpr.rate)}</td></tr>`,
    )
    .join('');
  const stackHtml = `<h2>The default detection stack per tier (what a write meets)</h2>
<p>Markers, validation rules, the instruction screen, MemSAD, MemSAD+ (gated) and the proactive probes at the tier's policy, configured as every principal's pipeline (<code>autoDetectionConfig()</code>). States: ${st.states.map((s) => `<b>${s.name}</b> — ${esc(s.description)}`).join('; ')}. Held-out: folds ${st.heldOut.folds.join(', ')} of ${st.heldOut.of} by text hash (${st.heldOut.rows} rows), never used to tune the probes. Intervals: 95 % Wilson.</p>
<table><tr><th>state</th><th>split</th><th>tier</th><th>stack instr-TPR</th><th>stack benign-FPR</th><th>target</th><th>screen alone TPR</th><th>screen alone FPR</th><th>benign held by</th><th></th></tr>${stackRows}</table>
<h3>Per source corpus</h3><table><tr><th rowspan="2">state</th><th rowspan="2">source</th><th rowspan="2">label</th><th rowspan="2">licence</th><th rowspan="2">n</th><th colspan="4">default stack</th><th colspan="4">screen alone</th></tr><tr>${TIERS.map((t) => `<th>${SHORT[t]}</th>`).join('')}${TIERS.map((t) => `<th>${SHORT[t]}</th>`).join('')}</tr>${stackGroups}</table>
<h3>Probes per tier: the instruction-score floor above which their flag counts</h3><p>Tuned: the lowest floor at which the stack's FPR on the tuning split is within the tier's target; shipped: <code>DEFAULT_PROACTIVE_TIERS</code> ("never": the probes do not hold that tier).</p>
<table><tr><th>state</th><th>tier</th><th>κ</th><th>tuned floor</th><th>tune FPR</th><th>shipped</th><th>shipped tune FPR</th><th>shipped held-out FPR</th><th>held-out instr-TPR</th></tr>${stackProbes}</table>
<h3>USER_OBSERVED probe policy curve (ADR 0053)</h3><p>The stack with the probes at (κ, floor): tuning split (folds 0–2) beside the held-out split (folds 3–4). Probe-only: benign texts of the tuning split that only the probes hold.</p>
<table><tr><th>state</th><th>κ</th><th>floor</th><th>tune FPR</th><th>tune instr-TPR</th><th>probe-only</th><th>held-out FPR</th><th>held-out instr-TPR</th></tr>${st.curve
    .map(
      (c) =>
        `<tr><td>${c.state}</td><td>${c.kappa}</td><td>${c.floor}</td>${ciCell(c.tuneFpr)}<td>${f3(c.tuneInstrTpr.rate)}</td><td>${c.tuneProbeOnly}</td>${ciCell(c.heldOutFpr)}<td>${f3(c.heldOutInstrTpr.rate)}</td></tr>`,
    )
    .join('')}</table>`;
  const th = TIERS.map((t) => `${t} ${r.model.thresholds[t].toFixed(2)}`).join(', ');
  const tierHead = TIERS.map((t) => `<th>${SHORT[t]}</th>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — write screening on public injection corpora</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}.ok td:last-child{color:#080}.miss td:last-child{color:#b00}.rocs{display:flex;gap:1em;flex-wrap:wrap}th.grp{text-align:center}</style></head><body>
<h1>Write screening on public prompt-injection corpora</h1>
<p>${r.data.rows} texts of the dev file: ${r.data.instructionAttacks} instruction-type attacks (BIPIA, ASB, InjecAgent, AgentDojo), ${r.data.falseFacts} false facts (PoisonedRAG — misinformation, not instructions: reported apart, never in an instruction TPR) and ${r.data.benign} benign texts (LoCoMo, BIPIA e-mails, AgentDojo environment texts and user task prompts). Each text is screened as a write of each tier would be: the article's markers, the validation rules and the instruction screen (<code>${esc(r.model.version)}</code>, embedder <code>${esc(r.embedder)}</code>; thresholds ${esc(th)}, set from benign false-positive budgets, not from this table). The instruction screen was trained on the redistributable rows of this same file (never on LoCoMo or the user task prompts), so its figures on those rows are in sample: the cross-validated columns re-run the whole training procedure with each text (5-fold by text hash, like the held-out half) or each whole corpus (leave-one-source-out) unseen.</p>
<h2>Against the issue's targets</h2><table><tr><th>figure</th><th>dev file</th><th>target</th><th>5-fold CV</th><th></th></tr>${head}</table>
${stackHtml}
<h2>ROC per tier</h2><p>The instruction threshold swept with the tier's rules as shipped; x axis zoomed to FPR ≤ 0.1 (dashed: FPR 0.02, TPR 0.7). Dot: the default threshold; square: the article's keyword filter.</p><div class="rocs">${r.roc.map(rocSvg).join('')}</div>
<h2>Overall</h2><table><tr><th>screen</th><th>instruction TPR</th><th>benign FPR</th><th>benign FPR without user prompts</th><th>false-fact TPR</th><th>CV TPR</th><th>CV FPR</th><th>LOSO TPR</th><th>LOSO FPR</th></tr>${overall}</table>
<h2>Per source</h2><p>Flag rate per tier (TPR for attacks, FPR for benign): in sample (shipped weights) | 5-fold CV | leave-one-source-out (trained sources only).</p><table><tr><th rowspan="2">source</th><th rowspan="2">label</th><th rowspan="2">role</th><th rowspan="2">licence</th><th rowspan="2">n</th><th class="grp" colspan="4">in sample</th><th class="grp" colspan="4">5-fold CV</th><th class="grp" colspan="4">leave-one-source-out</th><th rowspan="2">keyword</th></tr><tr>${tierHead}${tierHead}${tierHead}</tr>${groups}</table>
<h2>What each detector contributes (mixed query history)</h2>${contrib}
<h2>Per category (in sample, default thresholds)</h2><table><tr><th>category</th><th>label</th><th>n</th>${tierHead}<th>keyword</th></tr>${cats}</table>
<p>Run time ${(r.timing.totalMs / 1000).toFixed(1)} s; model ${(r.timing.modelMs / 1000).toFixed(1)} s for ${r.timing.embedded} texts, ${r.timing.cached} from the disk cache; content screening ${r.timing.screenUsPerWrite.toFixed(0)} µs per write (wall clock, embedding excluded).</p>
</body></html>`;
}
