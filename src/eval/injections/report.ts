/**
 * @module eval/injections/report
 * Renderers for `memwarden eval injections`: a plain-text summary (stdout, `summary.txt`) and a
 * self-contained HTML report with one ROC curve per tier as inline SVG (the way
 * eval/detect/report draws its curves), the headline against the issue's targets, the
 * per-source and per-category tables with cross-validated figures beside the in-sample ones,
 * the keyword baseline, PoisonedRAG apart, and what each detector contributes.
 */
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
  const th = TIERS.map((t) => `${t} ${r.model.thresholds[t].toFixed(2)}`).join(', ');
  const tierHead = TIERS.map((t) => `<th>${SHORT[t]}</th>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — write screening on public injection corpora</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}.ok td:last-child{color:#080}.miss td:last-child{color:#b00}.rocs{display:flex;gap:1em;flex-wrap:wrap}th.grp{text-align:center}</style></head><body>
<h1>Write screening on public prompt-injection corpora</h1>
<p>${r.data.rows} texts of the dev file: ${r.data.instructionAttacks} instruction-type attacks (BIPIA, ASB, InjecAgent, AgentDojo), ${r.data.falseFacts} false facts (PoisonedRAG — misinformation, not instructions: reported apart, never in an instruction TPR) and ${r.data.benign} benign texts (LoCoMo, BIPIA e-mails, AgentDojo environment texts and user task prompts). Each text is screened as a write of each tier would be: the article's markers, the validation rules and the instruction screen (<code>${esc(r.model.version)}</code>, embedder <code>${esc(r.embedder)}</code>; thresholds ${esc(th)}, set from benign false-positive budgets, not from this table). The instruction screen was trained on the redistributable rows of this same file (never on LoCoMo or the user task prompts), so its figures on those rows are in sample: the cross-validated columns re-run the whole training procedure with each text (5-fold by text hash, like the held-out half) or each whole corpus (leave-one-source-out) unseen.</p>
<h2>Against the issue's targets</h2><table><tr><th>figure</th><th>dev file</th><th>target</th><th>5-fold CV</th><th></th></tr>${head}</table>
<h2>ROC per tier</h2><p>The instruction threshold swept with the tier's rules as shipped; x axis zoomed to FPR ≤ 0.1 (dashed: FPR 0.02, TPR 0.7). Dot: the default threshold; square: the article's keyword filter.</p><div class="rocs">${r.roc.map(rocSvg).join('')}</div>
<h2>Overall</h2><table><tr><th>screen</th><th>instruction TPR</th><th>benign FPR</th><th>benign FPR without user prompts</th><th>false-fact TPR</th><th>CV TPR</th><th>CV FPR</th><th>LOSO TPR</th><th>LOSO FPR</th></tr>${overall}</table>
<h2>Per source</h2><p>Flag rate per tier (TPR for attacks, FPR for benign): in sample (shipped weights) | 5-fold CV | leave-one-source-out (trained sources only).</p><table><tr><th rowspan="2">source</th><th rowspan="2">label</th><th rowspan="2">role</th><th rowspan="2">licence</th><th rowspan="2">n</th><th class="grp" colspan="4">in sample</th><th class="grp" colspan="4">5-fold CV</th><th class="grp" colspan="4">leave-one-source-out</th><th rowspan="2">keyword</th></tr><tr>${tierHead}${tierHead}${tierHead}</tr>${groups}</table>
<h2>What each detector contributes (mixed query history)</h2>${contrib}
<h2>Per category (in sample, default thresholds)</h2><table><tr><th>category</th><th>label</th><th>n</th>${tierHead}<th>keyword</th></tr>${cats}</table>
<p>Run time ${(r.timing.totalMs / 1000).toFixed(1)} s; model ${(r.timing.modelMs / 1000).toFixed(1)} s for ${r.timing.embedded} texts, ${r.timing.cached} from the disk cache; content screening ${r.timing.screenUsPerWrite.toFixed(0)} µs per write (wall clock, embedding excluded).</p>
</body></html>`;
}
