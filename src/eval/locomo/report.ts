/**
 * @module eval/locomo/report
 * The LoCoMo evaluation's outputs: a text table (stdout), and a self-contained HTML page with
 * the same table and a grouped bar chart per k (inline SVG, no script).
 */
import { CATEGORY_NAMES } from './data.js';
import { KS, type LocomoReport, SYSTEMS, type System } from './run.js';

const f3 = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(3));
const esc = (s: string): string =>
  s.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );

const LABEL: Record<System, string> = {
  memwarden: 'memwarden (default)',
  dense: 'dense, undefended',
  bm25: 'BM25',
};
const COLOUR: Record<System, string> = { memwarden: '#2b6cb0', dense: '#a0aec0', bm25: '#dd6b20' };

function categories(r: LocomoReport): string[] {
  const cs = [...new Set(r.cells.map((c) => c.category))].filter((c) => c !== 'all').sort();
  return [...cs, 'all'];
}

const catName = (c: string): string =>
  c === 'all' ? 'all' : `${c} ${CATEGORY_NAMES[Number(c)] ?? ''}`.trim();

function recall(r: LocomoReport, s: System, c: string, k: number): number | undefined {
  return r.cells.find((x) => x.system === s && x.category === c && x.k === k)?.recall;
}

function questions(r: LocomoReport, c: string): number {
  return r.cells.find((x) => x.category === c)?.questions ?? 0;
}

/** The checks issue 20 names: recall@10 ≥ 0.60 overall, never below dense in any category. */
export function checks(r: LocomoReport): { name: string; ok: boolean }[] {
  const all10 = recall(r, 'memwarden', 'all', 10) ?? 0;
  const out = [{ name: `memwarden recall@10 (all) ${f3(all10)} ≥ 0.60`, ok: all10 >= 0.6 }];
  for (const c of categories(r))
    for (const k of KS) {
      const m = recall(r, 'memwarden', c, k) ?? 0;
      const d = recall(r, 'dense', c, k) ?? 0;
      out.push({ name: `${catName(c)} @${k}: memwarden ${f3(m)} ≥ dense ${f3(d)}`, ok: m >= d });
    }
  return out;
}

export function textTable(r: LocomoReport): string {
  const cs = categories(r);
  const head = [
    'category'.padEnd(16),
    'n'.padStart(5),
    ...SYSTEMS.flatMap((s) => KS.map((k) => `${s}@${k}`.padStart(13))),
  ];
  const lines = [
    `LoCoMo evidence recall — ${r.conversations.length} conversations, ${questions(r, 'all')} questions, model ${r.model}`,
    head.join(' '),
  ];
  for (const c of cs) {
    lines.push(
      [
        catName(c).padEnd(16),
        String(questions(r, c)).padStart(5),
        ...SYSTEMS.flatMap((s) => KS.map((k) => f3(recall(r, s, c, k)).padStart(13))),
      ].join(' '),
    );
  }
  lines.push(`memwarden writes: ${r.turnsPerSecond.toFixed(1)} turns/s`);
  for (const c of checks(r)) lines.push(`${c.ok ? 'PASS' : 'MISS'}  ${c.name}`);
  return `${lines.join('\n')}\n`;
}

function chart(r: LocomoReport, k: number): string {
  const cs = categories(r);
  const W = 720;
  const H = 280;
  const left = 40;
  const bottom = 40;
  const plotH = H - bottom - 20;
  const group = (W - left - 10) / cs.length;
  const bar = (group - 16) / SYSTEMS.length;
  const parts: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const y = 20 + plotH - (plotH * i) / 5;
    parts.push(`<line x1="${left}" x2="${W - 10}" y1="${y}" y2="${y}" stroke="#e2e8f0"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${(i / 5).toFixed(1)}</text>`,
    );
  }
  cs.forEach((c, gi) => {
    const x0 = left + gi * group + 8;
    SYSTEMS.forEach((s, si) => {
      const v = recall(r, s, c, k) ?? 0;
      const h = plotH * v;
      const x = x0 + si * bar;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${(20 + plotH - h).toFixed(1)}" width="${(bar - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLOUR[s]}"><title>${esc(LABEL[s])} ${esc(catName(c))}: ${f3(v)}</title></rect>`,
      );
    });
    parts.push(
      `<text x="${(x0 + (group - 16) / 2).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle" font-size="11">${esc(catName(c))}</text>`,
    );
  });
  const legend = SYSTEMS.map(
    (s, i) =>
      `<rect x="${left + i * 170}" y="${H - 14}" width="10" height="10" fill="${COLOUR[s]}"/><text x="${left + i * 170 + 14}" y="${H - 5}" font-size="11">${esc(LABEL[s])}</text>`,
  ).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="evidence recall at ${k} by category">${parts.join('')}${legend}</svg>`;
}

export function htmlReport(r: LocomoReport, meta: { data: string; command: string }): string {
  const cs = categories(r);
  const rows = cs
    .map(
      (c) =>
        `<tr><td>${esc(catName(c))}</td><td>${questions(r, c)}</td>${SYSTEMS.flatMap((s) =>
          KS.map((k) => `<td>${f3(recall(r, s, c, k))}</td>`),
        ).join('')}</tr>`,
    )
    .join('');
  const conv = r.conversations
    .map(
      (c) =>
        `<tr><td>${esc(c.id)}</td><td>${c.turns}</td><td>${c.questions}</td><td>${c.writeSeconds.toFixed(1)}</td><td>${(c.turns / c.writeSeconds).toFixed(1)}</td></tr>`,
    )
    .join('');
  const checkRows = checks(r)
    .map((c) => `<li>${c.ok ? '✅' : '❌'} ${esc(c.name)}</li>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — LoCoMo evidence recall</title>
<style>body{font:14px system-ui,sans-serif;max-width:900px;margin:2em auto;color:#1a202c}table{border-collapse:collapse}td,th{border:1px solid #cbd5e0;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>
<h1>LoCoMo evidence recall</h1>
<p>Data: <code>${esc(meta.data)}</code> — ${r.conversations.length} conversations, ${questions(r, 'all')} questions with evidence. Embedding model for all three systems: <code>${esc(r.model)}</code> (one vector per text, shared). No LLM is involved: every turn is stored as written (<code>infer: false</code>).</p>
<p>Command: <code>${esc(meta.command)}</code></p>
<p><b>memwarden (default)</b>: every turn written through <code>add(messages)</code> into a fresh default store (embedded PGlite, read model, detection on), each session's date as the event time; questions searched with the default ranking. <b>dense, undefended</b>: cosine top-k over the same vectors. <b>BM25</b>: k1 = 1.2, b = 0.75 over the same texts (<code>core/text</code>).</p>
<h2>recall@10</h2>${chart(r, 10)}
<h2>recall@5</h2>${chart(r, 5)}
<h2>Table</h2><table><tr><th>category</th><th>n</th>${SYSTEMS.flatMap((s) => KS.map((k) => `<th>${esc(s)}@${k}</th>`)).join('')}</tr>${rows}</table>
<h2>Checks (issue 20)</h2><ul>${checkRows}</ul>
<h2>Writes</h2><p>${r.turnsPerSecond.toFixed(1)} turns/s overall (embedding included).</p><table><tr><th>conversation</th><th>turns</th><th>questions</th><th>write s</th><th>turns/s</th></tr>${conv}</table>
</body></html>
`;
}
