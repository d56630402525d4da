/**
 * @module eval/authselect/report
 * Files of the AuthSelect evaluation: `rows.csv` (one line per question × arm × seed × defence),
 * `criterion.csv`, `summary.json` and a self-contained `report.html` (inline SVG, no scripts,
 * no external assets).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ATTACK_ARMS } from './attacks.js';
import { type AuthSelectEvalResult, DEFENCES, type EvalRow } from './run.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const csvCell = (v: unknown): string => {
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function rowsCsv(rows: readonly EvalRow[]): string {
  const cols: (keyof EvalRow)[] = [
    'question',
    'kind',
    'arm',
    'attacker',
    'attackSeed',
    'defence',
    'answer',
    'gold',
    'blocked',
    'harmful',
    'ifcBlind',
    'selectionChanged',
    'authDiverged',
    'replayMode',
  ];
  return (
    [cols.join(','), ...rows.map((r) => cols.map((c) => csvCell(r[c])).join(','))].join('\n') + '\n'
  );
}

const COLORS = ['#6b7280', '#2563eb', '#7c3aed', '#d97706', '#db2777', '#0891b2', '#059669'];

/** A grouped bar chart as an inline SVG (values in [0, 1]). */
function bars(
  title: string,
  groups: readonly string[],
  series: readonly string[],
  value: (g: string, s: string) => number,
): string {
  const W = 880;
  const H = 260;
  const left = 40;
  const bottom = 60;
  const gw = (W - left - 10) / groups.length;
  const bw = Math.max(2, (gw - 8) / series.length);
  const y = (v: number): number => 20 + (H - bottom - 20) * (1 - v);
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + 30}" role="img" aria-label="${esc(title)}">`;
  out += `<text x="${left}" y="14" font-size="13" font-weight="bold">${esc(title)}</text>`;
  for (const t of [0, 0.25, 0.5, 0.75, 1])
    out += `<line x1="${left}" x2="${W}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e7eb"/><text x="4" y="${y(t) + 4}" font-size="10">${t}</text>`;
  groups.forEach((g, gi) => {
    series.forEach((s, si) => {
      const v = Math.max(0, Math.min(1, value(g, s)));
      const x = left + gi * gw + 4 + si * bw;
      out += `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(`${g} / ${s}: ${v}`)}</title></rect>`;
    });
    out += `<text x="${left + gi * gw + gw / 2}" y="${H - bottom + 14}" font-size="10" text-anchor="middle">${esc(g.replace(/_/g, ' '))}</text>`;
  });
  series.forEach((s, si) => {
    out += `<rect x="${left + si * 122}" y="${H + 8}" width="10" height="10" fill="${COLORS[si % COLORS.length]}"/><text x="${left + si * 122 + 14}" y="${H + 17}" font-size="11">${esc(s.replace(/_/g, ' '))}</text>`;
  });
  return `${out}</svg>`;
}

function table(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${esc(String(c))}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

export function reportHtml(res: AuthSelectEvalResult): string {
  const s = res.summary;
  const arms = [...ATTACK_ARMS];
  const harmChart = bars(
    'Harm by attack arm and defence',
    arms,
    DEFENCES,
    (a, d) => s.arms[a]?.defences[d as (typeof DEFENCES)[number]]?.harm ?? 0,
  );
  const divChart = bars(
    'Selection divergence (attacked vs clean) and AuthSelect divergence (G vs G_A)',
    arms,
    ['selection_divergence', 'authselect_divergence'],
    (a, k) =>
      k === 'selection_divergence'
        ? (s.arms[a]?.selectionDivergence ?? 0)
        : (s.arms[a]?.authselectDivergence ?? 0),
  );
  const defChart = bars(
    'Pooled harm and clean over-block by defence',
    [...DEFENCES],
    ['harm', 'overblock'],
    (d, k) => s.defences[d as (typeof DEFENCES)[number]][k as 'harm' | 'overblock'],
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — AuthSelect evaluation</title>
<style>body{font:14px/1.45 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#111}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d1d5db;padding:3px 8px;text-align:right}th{background:#f3f4f6}td:first-child,th:first-child{text-align:left}code{background:#f3f4f6;padding:0 3px}</style></head><body>
<h1>AuthSelect evaluation</h1>
<p>Produced by: ${esc(s.producedBy)}. Every passage and attack object is a signed entry written by a registered principal through <code>Memory.graph</code> (the write path the MCP and HTTP graph routes use); the selection runs on the fold of the whole store.</p>
<p>Graph memory over the signed ledger; PPR selector (damping 0.5, top-${s.k}); ${s.corpus.passages} generated passages (${esc(s.corpus.generator)}), ${s.corpus.questions} questions, ${s.corpus.cleanCorrect} clean-correct; ${s.attackSeeds} attack seeds per cell; runtime ${s.runtimeMs} ms. Harm is asserted non-gold answers per attacked row on clean-correct questions; over-block is availability loss on the clean condition (which contains benign unauthenticated web notes); an IFC-blind row is harmful with an all-authenticated justification.</p>
<h2>Defences</h2>
${table(
  ['defence', 'harm', 'over-block', 'IFC-blind rows', 'harmful rows', 'rows'],
  DEFENCES.map((d) => [
    d,
    s.defences[d].harm,
    s.defences[d].overblock,
    s.defences[d].ifcBlindRows,
    s.defences[d].harmfulRows,
    s.defences[d].rows,
  ]),
)}
${defChart}
<h2>By attacker principal</h2>
<p>What the selection saw of each attacker's writes is read back from the store: the signed lineage label and the authority the authentication policy folds them to.</p>
${table(
  [
    'attacker',
    'tier',
    'lineage',
    'writes',
    'held',
    'signed labels',
    'folded authority',
    'harm none',
    'harm AuthSelect',
    'over-block AuthSelect',
    'IFC-blind (none)',
  ],
  Object.entries(s.byAttacker).map(([a, x]) => [
    a,
    x.tier,
    x.lineage,
    x.writes,
    x.held,
    Object.entries(x.labels)
      .map(([l, n]) => `${l} ${n}`)
      .join(', '),
    Object.entries(x.authorities)
      .map(([l, n]) => `${l} ${n}`)
      .join(', '),
    x.defences.none.harm,
    x.defences.authselect.harm,
    x.defences.authselect.overblock,
    x.defences.none.ifcBlindRows,
  ]),
)}
<h2>Beside the paper</h2>
<p>Paper: ${esc(s.paper.source)}. Ours: the synthetic corpus, the deterministic reader, scripted attackers — the substrate differs, so compare the shape (which defences close the channel), not the magnitudes.</p>
<h3>Table I — reliance ρ</h3>
<p>${esc(s.reliance.definition)}.</p>
${table(
  ['selector', 'swap', 'correct', 'lost by the swap', 'ρ ours', 'ρ paper'],
  s.reliance.rows.map((r) => [r.selector, r.swap, r.correct, r.lost, r.rho, r.paperRho]),
)}
<h3>Table III — harm by capability</h3>
${table(
  [
    'arm',
    'none ours',
    'none paper',
    'just. IFC ours',
    'just. IFC paper',
    'AuthSelect ours',
    'AuthSelect paper',
    'blind ours',
    'blind paper',
  ],
  Object.entries(s.paper.tableIII).map(([arm, p]) => {
    const o = s.arms[arm]?.defences;
    return [
      arm,
      o?.none.harm ?? '',
      p.none,
      o?.justification_ifc.harm ?? '',
      p.justification_ifc,
      o?.authselect.harm ?? '',
      p.authselect,
      o?.justification_ifc.ifcBlindRows ?? '',
      p.blind,
    ];
  }),
)}
<h3>Table IV — post-selection baselines (oracle arm)</h3>
<p>Paper: ${esc(s.paper.tableIV)}. Ours: B-SLM is Bayesian per-memory trust from each selected record's write channel (Beta(1,1) prior, threshold 1/2); on our records it makes the same decision as the provenance rerank on every row. B-AMemGuard is a consensus self-check with the deterministic reader (one path per selected memory, strict majority, else abstain); no model, so not A-MemGuard's LLM auditor.</p>
${table(
  ['defence', 'harm (oracle)', 'IFC-blind rows (oracle)', 'harm (all arms)', 'over-block'],
  DEFENCES.map((d) => [
    d,
    s.arms['oracle']?.defences[d]?.harm ?? '',
    s.arms['oracle']?.defences[d]?.ifcBlindRows ?? '',
    s.defences[d].harm,
    s.defences[d].overblock,
  ]),
)}
<h2>Attack arms</h2>
${table(
  [
    'arm',
    'selection div.',
    'AuthSelect div.',
    ...DEFENCES.map((d) => `harm: ${d}`),
    'blind (none)',
  ],
  arms.map((a) => [
    a,
    s.arms[a]?.selectionDivergence ?? 0,
    s.arms[a]?.authselectDivergence ?? 0,
    ...DEFENCES.map((d) => s.arms[a]?.defences[d].harm ?? 0),
    s.arms[a]?.defences.none.ifcBlindRows ?? 0,
  ]),
)}
${harmChart}
${divChart}
<h2>Selector criterion (oracle write)</h2>
${table(
  [
    'selector',
    'rows',
    'divergence',
    'IFC-blind harmful rows',
    'AuthSelect harmful rows',
    'channel',
  ],
  s.criterion.map((c) => [
    c.selector,
    c.rows,
    c.divergence,
    c.blindHarmRows,
    c.authselectHarmRowsWithoutAttack === undefined
      ? c.authselectHarmRows
      : `${c.authselectHarmRows} (${c.authselectHarmRowsWithoutAttack} the same with no attack: the G_A selection itself answers wrong)`,
    c.verdict,
  ]),
)}
${
  s.rrfUnderAttack === undefined
    ? ''
    : `<h3>RRF re-run under every attack arm</h3>
<p>Semantic + lexical fusion reads no structure: edge writes cannot move it; an arm's injected passage enters its content rankings (unauthenticated, so any harm it causes is visible to IFC).</p>
${table(
  ['arm', 'rows', 'divergence', 'harmful rows', 'IFC-blind harmful rows'],
  Object.entries(s.rrfUnderAttack).map(([arm, a]) => [
    arm,
    a.rows,
    a.divergence,
    a.harmfulRows,
    a.blindHarmRows,
  ]),
)}`
}
<h2>Live action: append-only transfer ledger</h2>
<p>${s.ledger.attempted} action questions; a compromised peer commits six signed unauthenticated relations; the reader commits <code>commit_action(target)</code> (policy authority A). Hash chain valid: ${s.ledger.chainValid}.</p>
${table(
  ['defence', 'misdirected transfers', 'blocked'],
  (['none', 'justification_ifc', 'authselect'] as const).map((d) => [
    d,
    s.ledger.misdirected[d],
    s.ledger.blocked[d],
  ]),
)}
${s.ledger.example === undefined ? '' : `<p>Example: “${esc(s.ledger.example.question)}” — gold ${esc(s.ledger.example.gold)}; no defence transfers to ${esc(s.ledger.example.none)}; AuthSelect to ${esc(s.ledger.example.authselect)}.</p>`}
${
  s.ledgerAgent === undefined
    ? ''
    : `<h3>The compromised peer as an agent principal (USER_OBSERVED)</h3>
<p>The same six signed relations, written by an <code>agent</code> principal. What is authenticated is the graph authentication policy (writer kind AND lineage label): an agent's relation derived from web content carries that content as a signed parent and is not authenticated; a relation written without lineage is authenticated under the default policy (agents admitted) and not under the users-only policy.</p>
${table(
  [
    'peer',
    'attempted',
    'misdirected: none',
    'misdirected: justification IFC',
    'misdirected: AuthSelect',
    'blocked: AuthSelect',
  ],
  Object.values(s.ledgerAgent).map((c) => [
    c.peer ?? '',
    c.attempted,
    c.misdirected.none,
    c.misdirected.justification_ifc,
    c.misdirected.authselect,
    c.blocked.authselect,
  ]),
)}`
}
${
  s.product === undefined
    ? ''
    : `<h3>The same case through the product (Memory's write path and graphSearch)</h3>
<p>Produced by: ${esc(s.product.producedBy)}. Principal kind ${esc(s.product.principal)}; action <code>${esc(s.product.action)}</code>; ${s.product.questions} transfer questions. Clean questions (no attack): the gate did not allow ${s.product.clean.notAllowed} (it repaired with the authenticated replay), the plain selection answered wrong ${s.product.clean.wrong}, over-blocked (what AuthSelect acts on is not the gold payee) ${s.product.clean.overblock}.</p>
${table(
  [
    'arm',
    'attempted',
    'misdirected: none',
    'misdirected: AuthSelect',
    'blocked: AuthSelect',
    'held for review',
  ],
  s.product.arms.map((a) => [
    a.arm,
    a.attempted,
    a.misdirected.none,
    a.misdirected.authselect,
    a.blocked,
    a.held,
  ]),
)}`
}
<h2>Replay cost</h2>
<p>AuthSelect modes over all selections: clean (no unauthenticated structure, no replay) ${s.replay.clean}, certified by the margin bound ${s.replay.certified}, replayed ${s.replay.replayed}.</p>
</body></html>
`;
}

/** Write rows.csv, criterion.csv, summary.json and report.html into `dir`. */
export async function writeAuthSelectReport(
  res: AuthSelectEvalResult,
  dir: string,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: [string, string][] = [
    ['rows.csv', rowsCsv(res.rows)],
    [
      'criterion.csv',
      [
        'selector,rows,divergence,blindHarmRows,authselectHarmRows,verdict',
        ...res.summary.criterion.map((c) =>
          [c.selector, c.rows, c.divergence, c.blindHarmRows, c.authselectHarmRows, c.verdict].join(
            ',',
          ),
        ),
      ].join('\n') + '\n',
    ],
    ['summary.json', JSON.stringify(res.summary, null, 2) + '\n'],
    ['report.html', reportHtml(res)],
  ];
  const out: string[] = [];
  for (const [name, body] of files) {
    const p = join(dir, name);
    await writeFile(p, body);
    out.push(p);
  }
  return out;
}
