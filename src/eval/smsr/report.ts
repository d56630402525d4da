/**
 * @module eval/smsr/report
 * Writes the SMSR evaluation: `smsr.csv` (one row per measured cell), `summary.json`, and a
 * self-contained `report.html` with the Fig. 3 certificate curves as inline SVG and the
 * measured points (Wilson 95 % bars) on them. Output is a pure function of the summary.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { delta } from '../../core/smsr/index.js';
import { SCRIPTED_AGENT, type SmsrEvalSummary } from './harness.js';

const f = (x: number, d = 4): string => x.toFixed(d);

export function toCsv(s: SmsrEvalSummary): string {
  const lines = [
    'study,attack,t,mode,m,k,runs,trials,successes,rate,wilson_lower,wilson_upper,delta,holds,holds_familywise,tight,agent,judge',
  ];
  // Every row names who produced it (issue 19); model ids never contain commas or quotes.
  const who = [s.params.models.agent, s.params.models.judge].map((x) => x.replace(/[,"\n]/g, ' '));
  for (const a of s.attacks) {
    const r = a.utility ?? a.asr;
    lines.push(
      [
        a.attack === 'clean' ? 'utility' : 'attack',
        a.attack,
        a.t,
        a.mode,
        s.params.m,
        s.params.k,
        s.params.runs,
        r.trials,
        r.successes,
        f(r.rate),
        f(r.lower),
        f(r.upper),
        '',
        '',
        '',
        '',
        ...who,
      ].join(','),
    );
  }
  for (const c of s.certificate) {
    lines.push(
      [
        'certificate',
        'authenticated-direct',
        c.t,
        'c1c2',
        c.m,
        c.k,
        c.runs,
        c.asr.trials,
        c.asr.successes,
        f(c.asr.rate),
        f(c.asr.lower),
        f(c.asr.upper),
        f(c.delta),
        c.holds,
        c.holdsFamilywise,
        c.tight,
        ...who,
      ].join(','),
    );
  }
  return lines.join('\n') + '\n';
}

interface Series {
  readonly points: readonly [number, number][];
  readonly colour: string;
  readonly dash?: string;
  readonly label: string;
}
interface Mark {
  readonly x: number;
  readonly y: number;
  readonly lo: number;
  readonly hi: number;
  readonly colour: string;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A small line chart: x linear over [x0, x1], y over [0, 1]. */
function chart(
  title: string,
  xLabel: string,
  x0: number,
  x1: number,
  series: Series[],
  marks: Mark[],
  hline?: number,
): string {
  const W = 460;
  const H = 300;
  const L = 50;
  const R = 130;
  const T = 30;
  const B = 40;
  const px = (x: number): number => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const py = (y: number): number => T + (1 - y) * (H - T - B);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
  ];
  out.push(`<text x="${L}" y="18" font-size="13" font-weight="bold">${esc(title)}</text>`);
  out.push(
    `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#999"/>`,
  );
  for (const y of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    out.push(
      `<line x1="${L}" x2="${W - R}" y1="${py(y)}" y2="${py(y)}" stroke="#eee"/><text x="${L - 6}" y="${py(y) + 4}" text-anchor="end">${y.toFixed(1)}</text>`,
    );
  }
  const step = Math.max(1, Math.round((x1 - x0) / 8));
  for (let x = x0; x <= x1; x += step)
    out.push(`<text x="${px(x)}" y="${H - B + 14}" text-anchor="middle">${x}</text>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(
    `<text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle">δ / ASR</text>`,
  );
  if (hline !== undefined)
    out.push(
      `<line x1="${L}" x2="${W - R}" y1="${py(hline)}" y2="${py(hline)}" stroke="#c00" stroke-dasharray="2 3"/><text x="${W - R + 4}" y="${py(hline) + 4}" fill="#c00">δ = ${hline}</text>`,
    );
  series.forEach((s, i) => {
    const d = s.points
      .map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    out.push(
      `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
    );
    out.push(
      `<line x1="${W - R + 6}" x2="${W - R + 26}" y1="${T + 12 + i * 16}" y2="${T + 12 + i * 16}" stroke="${s.colour}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/><text x="${W - R + 30}" y="${T + 16 + i * 16}">${esc(s.label)}</text>`,
    );
  });
  for (const m of marks) {
    out.push(
      `<line x1="${px(m.x)}" x2="${px(m.x)}" y1="${py(m.lo)}" y2="${py(m.hi)}" stroke="${m.colour}" stroke-width="1.5"/>`,
    );
    out.push(
      `<circle cx="${px(m.x)}" cy="${py(m.y)}" r="3.5" fill="${m.colour}" stroke="#000" stroke-width="0.5"/>`,
    );
  }
  out.push('</svg>');
  return out.join('');
}

const COLOURS = ['#1f77b4', '#2ca02c', '#9467bd'];

export function toHtml(s: SmsrEvalSummary): string {
  const { k, runs } = s.params;
  const ts = [1, 2, 3, 4, 5, 6, 7, 8];
  const figA = chart(
    `(a) δ vs t at m = 20, k = ${k}`,
    'adversary budget t',
    1,
    8,
    [
      {
        points: ts.map((t) => [t, delta(t, 20, k, runs)]),
        colour: '#1f77b4',
        label: `n_runs = ${runs}`,
      },
      {
        points: ts.map((t) => [t, delta(t, 20, k, runs + 2)]),
        colour: '#1f77b4',
        dash: '5 4',
        label: `n_runs = ${runs + 2}`,
      },
    ],
    s.certificate
      .filter((c) => c.m === 20)
      .map((c) => ({ x: c.t, y: c.asr.rate, lo: c.asr.lower, hi: c.asr.upper, colour: '#d62728' })),
  );
  const ms: number[] = [];
  for (let m = Math.max(k, 6); m <= 60; m++) ms.push(m);
  const figB = chart(
    `(b) δ vs m, k = ${k}, n_runs = ${runs}`,
    'candidate pool m',
    ms[0] as number,
    60,
    [1, 2, 3].map((t, i) => ({
      points: ms.map((m) => [m, delta(t, m, k, runs)] as [number, number]),
      colour: COLOURS[i] as string,
      label: `t = ${t}`,
    })),
    s.certificate.map((c) => ({
      x: c.m,
      y: c.asr.rate,
      lo: c.asr.lower,
      hi: c.asr.upper,
      colour: COLOURS[c.t - 1] as string,
    })),
    0.1,
  );
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const ci = (i: { lower: number; upper: number }): string => `[${pct(i.lower)}, ${pct(i.upper)}]`;
  const certRows = s.certificate
    .map(
      (c) =>
        `<tr><td>${c.t}</td><td>${c.m}</td><td>${f(c.delta)}</td><td>${pct(c.asr.rate)}</td><td>${ci(c.asr)}</td><td>${c.asr.trials}</td><td>${c.holds ? '✓' : c.holdsFamilywise ? '✓ family-wise' : '✗'}</td><td>${c.tight ? 'δ in CI' : ''}</td><td>${f(c.contaminatedRunFraction)} / ${f(c.expectedContaminatedRunFraction)}</td></tr>`,
    )
    .join('');
  const attackNames = [...new Set(s.attacks.map((a) => `${a.attack}|${a.t}`))];
  const modes = [...new Set(s.attacks.map((a) => a.mode))];
  const attackRows = attackNames
    .map((key) => {
      const [attack, t] = key.split('|') as [string, string];
      const cells = modes.map((mo) => {
        const a = s.attacks.find((x) => x.attack === attack && String(x.t) === t && x.mode === mo);
        if (a === undefined) return '<td></td>';
        const r = a.utility ?? a.asr;
        return `<td title="${ci(r)} n=${r.trials}">${pct(r.rate)}</td>`;
      });
      return `<tr><td>${attack === 'clean' ? 'clean (utility)' : esc(attack)}</td><td>${attack === 'clean' ? '' : t}</td>${cells.join('')}</tr>`;
    })
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memwarden — SMSR evaluation</title>
<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}td:first-child{text-align:left}</style></head><body>
<h1>SMSR evaluation</h1>
<p>${s.params.scenarios} enterprise-policy scenarios, ${s.params.seedsPerScenario} signed seed memories each; k = ${k}, n_runs = ${runs}, seed <code>${esc(s.params.seed)}</code>. Agent: <b>${esc(s.params.models.agent)}</b>; judge: <b>${esc(s.params.models.judge)}</b>. ${s.params.models.agent === SCRIPTED_AGENT ? "The scripted worst-case agent answers with the attacker's claim whenever an adversarial memory is in its context, so attack success equals δ by construction (a check of the certificate's arithmetic and the sampler's uniformity, not of a model's behaviour): a per-cell 95 % check then fails about 2.5 % of the time by chance, and the family-wise column (Bonferroni over the six cells) is the decision." : 'A model agent is not worst-case: its attack success may sit below δ; the certificate remains the bound.'}</p>
<h2>Certificate (Theorem 2) vs measurement</h2>
<div>${figA}${figB}</div>
<table><tr><th>t</th><th>m</th><th>δ</th><th>ASR</th><th>Wilson 95 %</th><th>trials</th><th>ASR ≤ δ (Wilson lower ≤ δ)</th><th>tight</th><th>contaminated runs: measured / 1 − p_clean</th></tr>${certRows}</table>
<h2>Attack success rate by class and mode (m = ${s.params.m})</h2>
<p>Cells are ASR (hover for the Wilson interval); the clean row is utility (fraction judged correct). <code>c1c2-stringvote</code> aggregates the same ablation runs by string majority, for the Consistent Minority Effect.</p>
<table><tr><th>attack</th><th>t</th>${modes.map((m) => `<th>${esc(m)}</th>`).join('')}</tr>${attackRows}</table>
<h2>Consistent Minority Effect (authenticated direct, t = 1)</h2>
<p>String vote ASR ${pct(s.cme.stringVoteAsr.rate)} ${ci(s.cme.stringVoteAsr)} vs verdict vote ${pct(s.cme.verdictVoteAsr.rate)} ${ci(s.cme.verdictVoteAsr)} on the same runs (n = ${s.cme.verdictVoteAsr.trials}).</p>
</body></html>
`;
}

/** Write smsr.csv, summary.json and report.html into `dir`; returns their paths. */
export function writeSmsrReport(
  dir: string,
  s: SmsrEvalSummary,
): { csv: string; summary: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const paths = {
    csv: join(dir, 'smsr.csv'),
    summary: join(dir, 'summary.json'),
    html: join(dir, 'report.html'),
  };
  writeFileSync(paths.csv, toCsv(s));
  writeFileSync(paths.summary, JSON.stringify(s, null, 2) + '\n');
  writeFileSync(paths.html, toHtml(s));
  return paths;
}
