/**
 * @module eval/memlineage/report
 * The self-contained HTML report: inline SVG charts (ASR heatmap, τ × K small multiples,
 * Table 3 and mixed-context bars) and every table, with the paper's values beside ours. No
 * external assets, no timestamps.
 */
import { AttackNames } from './attacks.js';
import { ProfileNames } from './profiles.js';
import { PAPER } from './paper.js';
import { KS, SCHEDULES, TAUS, type Results } from './run.js';

/** The paper's value of a cell, or '—' where the paper has none. */
const pv = (x: unknown): string => (x === undefined || x === null ? '—' : String(x));
/** Each of our cells followed by the paper's value for it (`—` where the paper has none). */
const besidePaper = (ours: readonly unknown[], paper: readonly unknown[]): unknown[] =>
  ours.flatMap((x, i) => [x, pv(paper[i])]);

const h = (s: unknown): string =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
const GOOD = '#2e7d32';
const BAD = '#c62828';
const NEUTRAL = '#eceff1';
const f2 = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

function heatmap(r: Results): string {
  const cw = 170;
  const ch = 34;
  const x0 = 130;
  const y0 = 30;
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${x0 + cw * 3 + 120}" height="${y0 + ch * ProfileNames.length + 10}" role="img" aria-label="ASR heatmap">`;
  // cw below is per cell; the text carries ours · the paper's value.
  AttackNames.forEach((a, j) => {
    s += `<text x="${x0 + j * cw + cw / 2}" y="20" text-anchor="middle" font-size="13">${h(a)}</text>`;
  });
  ProfileNames.forEach((p, i) => {
    const y = y0 + i * ch;
    s += `<text x="${x0 - 8}" y="${y + ch / 2 + 4}" text-anchor="end" font-size="13">${h(p)}</text>`;
    let blocked = 0;
    AttackNames.forEach((a, j) => {
      const v = r.asr.find((c) => c.defense === p && c.attack === a)?.asr ?? 0;
      if (v === 0) blocked++;
      s += `<rect x="${x0 + j * cw}" y="${y}" width="${cw - 2}" height="${ch - 2}" fill="${v === 0 ? GOOD : BAD}"/>`;
      const paper = (PAPER.table1 as Record<string, readonly number[]>)[p]?.[j];
      s += `<text x="${x0 + j * cw + cw / 2}" y="${y + ch / 2 + 4}" text-anchor="middle" font-size="12" fill="#fff">${f2(v)} ${v === 0 ? 'blocked' : 'wins'} · paper ${paper === undefined ? '—' : f2(paper)}</text>`;
    });
    s += `<text x="${x0 + 3 * cw + 8}" y="${y + ch / 2 + 4}" font-size="12">${blocked}/3 blocked</text>`;
    if (p === 'memlineage')
      s += `<rect x="${x0 - 2}" y="${y - 2}" width="${cw * 3 + 2}" height="${ch + 2}" fill="none" stroke="#1565c0" stroke-width="3"/>`;
  });
  return `${s}</svg>`;
}

function smallMultiples(r: Results): string {
  const cw = 26;
  const ch = 20;
  const pw = 4 * cw + 60;
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${SCHEDULES.length * (pw + 10)}" height="${ch * TAUS.length + 70}" role="img" aria-label="tau x K small multiples">`;
  SCHEDULES.forEach((sc, n) => {
    const ox = n * (pw + 10) + 40;
    const title = sc.algorithm === 'coarse' ? 'Coarse' : `LmSelfEval w0=${sc.w0} d=${sc.d}`;
    s += `<text x="${ox}" y="14" font-size="11" font-weight="bold">(${String.fromCharCode(97 + n)}) ${h(title)}</text>`;
    KS.forEach((K, j) => {
      s += `<text x="${ox + j * cw + cw / 2}" y="32" text-anchor="middle" font-size="10">K=${K}</text>`;
    });
    TAUS.forEach((tau, i) => {
      const y = 38 + i * ch;
      s += `<text x="${ox - 4}" y="${y + 14}" text-anchor="end" font-size="10">${tau.toFixed(2)}</text>`;
      const row = KS.map(
        (K) =>
          r.ablation.find(
            (c) =>
              c.algorithm === sc.algorithm &&
              c.judge_init === (sc.w0 === undefined ? '' : String(sc.w0)) &&
              c.judge_decay === (sc.d === undefined ? '' : String(sc.d)) &&
              c.tau === tau &&
              c.K === K,
          )?.propagated ?? 0,
      );
      const flips = new Set(row).size > 1;
      row.forEach((v, j) => {
        s += `<rect x="${ox + j * cw}" y="${y}" width="${cw - 2}" height="${ch - 2}" fill="${v === 1 ? GOOD : BAD}" stroke="${flips ? '#f9a825' : 'none'}" stroke-width="2"/>`;
        s += `<text x="${ox + j * cw + cw / 2 - 1}" y="${y + 14}" text-anchor="middle" font-size="10" fill="#fff">${v}</text>`;
      });
    });
  });
  return `${s}</svg>`;
}

function bars(
  title: string,
  items: readonly { label: string; value: number; max: number; note?: string }[],
): string {
  const bw = 260;
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${bw + 320}" height="${items.length * 24 + 26}" role="img" aria-label="${h(title)}">`;
  s += `<text x="0" y="14" font-size="12" font-weight="bold">${h(title)}</text>`;
  items.forEach((it, i) => {
    const y = 22 + i * 24;
    s += `<text x="170" y="${y + 14}" text-anchor="end" font-size="11">${h(it.label)}</text>`;
    s += `<rect x="178" y="${y}" width="${bw}" height="18" fill="${NEUTRAL}"/>`;
    s += `<rect x="178" y="${y}" width="${it.max === 0 ? 0 : (bw * it.value) / it.max}" height="18" fill="#1565c0"/>`;
    s += `<text x="${178 + bw + 6}" y="${y + 14}" font-size="11">${it.value}/${it.max}${it.note === undefined ? '' : ` ${h(it.note)}`}</text>`;
  });
  return `${s}</svg>`;
}

function table(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return `<table><thead><tr>${head.map((c) => `<th>${h(c)}</th>`).join('')}</tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr>${r.map((c) => `<td>${h(typeof c === 'number' ? f2(c) : c)}</td>`).join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
}

const CHOICES = [
  'AgentPoison plants are signed with an adversary Ed25519 key that is not in the verifier registry and written straight into the store (compromised/shared store); verification drops them at the signature stage (KEY_UNKNOWN).',
  'sig_only renders every entry that verifies as TRUSTED (signature = authenticity, no lineage); no_defense renders everything TRUSTED without verifying. Both keep the same gate, which then has nothing to refuse.',
  'MemoryGraft: an upstream-agent tool return is committed by the agent as an experience entry under its own principal; oracle retrieval returns only that entry.',
  'The Table 1 sleeper column uses K = 3 Coarse derivation steps (the paper: a single derivation); K in {1,2,3,5} is swept in Tables 5-6.',
  'A derived entry with an untrusted strong ancestor is stored as DERIVED_UNTRUSTED (memwarden compresses labels when it stores them); the paper prints Equation (1), EXTERNAL, for the Table 2 summary trust — shown beside ours as the Eq. (1) column. Same gate outcome.',
  'The τ × K sweep uses five attribution configurations: Coarse, and the real hardened LmSelfEval over a scripted judge model with (w0, d) in {(1,1), (0.6,1), (0.7,0.7), (0.9,0.7)}.',
  'memory_sandbox removes recall entirely (also for derivation steps); coarse_taint is the gate with layer1Scope = context (any untrusted segment in the context denies a sensitive call).',
  'strict = strictLineageOptions(0.3). Tables 12-13 isolate each strict knob alone on the default point at τ = 0.3; Table 12 also reports the full strict profile.',
  'Table 3 uses memwarden’s own banking environment: 3 user tasks (pay bill, spending summary, pay like last month) × 2 injection tasks (attacker recipient; attacker recipient + amount). Blocked / repaired counts are this scripted agent’s, not a hosted model’s retries.',
  'Timing (Table 7) is wall-clock dependent and is not part of these byte-identical artifacts: `memwarden eval memlineage --timings` writes perf_baseline.csv beside them (the filter row verifies and renders 8 entries not verified before; the cached re-verification is its own row).',
  'Since issue 18 the gate fails closed: a governed value (e-mail, URL, domain, IBAN, phone, account) that traces to nothing is require_user, so in no_defense / sig_only the same gate refuses some adaptive attacks whose values it cannot trace; the adaptive agent is fully steered (it makes the attacker target call whenever planted content reaches its context).',
];

export function renderReport(r: Results, s: Record<string, unknown>): string {
  const checks = s['checks'] as Record<string, boolean>;
  const t9 =
    (s['tables'] as Record<string, { ours: Record<string, string[]> }>)['table9']?.ours ?? {};
  const body = [
    '<h1>MemLineage evaluation — memwarden harness</h1>',
    `<p>Deterministic replay of MemLineage §6 on memwarden's real code paths (Ed25519 ledger, RFC 6962 log, lineage propagation, sealed rendering, sensitive-action gate). Checks: ${Object.entries(
      checks,
    )
      .map(([k, v]) => `<b>${h(k)}</b>=${v ? 'yes' : 'NO'}`)
      .join(', ')}.</p>`,
    '<h2>Table 1 — ASR matrix</h2>',
    heatmap(r),
    '<h2>Table 2 — two-session RAG-to-memory</h2>',
    '<p>Stored label vs Equation (1): memwarden compresses every entry derived from untrusted ancestry to DERIVED_UNTRUSTED when it stores the label; the paper prints Equation (1) itself, the max over the strong parents (EXTERNAL here). The Eq. (1) column recomputes it from the signed lineage; the gate treats both alike (untrusted).</p>',
    table(
      [
        'defence',
        'stored label',
        'Eq. (1) trust',
        'paper trust',
        'parents',
        'paper',
        'tool',
        'paper',
        'fired',
        'paper',
      ],
      r.rag.map((x) => {
        const p = (PAPER.table2 as Record<string, readonly unknown[]>)[x.defense] ?? [];
        return [
          x.defense,
          x.summary_trust,
          ...besidePaper([x.eq1_trust, x.parents, x.tool, x.fired], p),
        ];
      }),
    ),
    '<h2>Table 3 — vulnerable banking agent (6 pairs)</h2>',
    bars(
      'ASR (attacker goal met)',
      r.table3.map((x) => ({ label: x.defense, value: x.asr, max: x.pairs })),
    ),
    bars(
      'Utility (user task done)',
      r.table3.map((x) => ({ label: x.defense, value: x.utility, max: x.pairs })),
    ),
    table(
      ['defence', 'ASR', 'paper', 'utility', 'paper', 'blocked', 'paper', 'repaired', 'paper'],
      r.table3.map((x) => {
        const p = (PAPER.table3 as Record<string, readonly number[]>)[x.defense] ?? [];
        return [
          x.defense,
          `${x.asr}/${x.pairs}`,
          p[0] === undefined ? '—' : `${p[0]}/6`,
          `${x.utility}/${x.pairs}`,
          p[1] === undefined ? '—' : `${p[1]}/6`,
          x.blocked,
          pv(p[2]),
          x.repaired,
          pv(p[3]),
        ];
      }),
    ),
    '<p>Blocked / repaired count this scripted agent’s proposals; the paper’s count a hosted model’s retries (Strip+retry: 31), so those two columns are not expected to agree.</p>',
    '<h2>Table 4 — authority repair</h2>',
    table(
      ['scenario', 'verdict', 'paper verdict', 'utility', 'attacker blocked'],
      r.repair.map((x) => [
        x.scenario,
        x.verdict,
        pv((PAPER.table4 as Record<string, string>)[x.scenario]),
        x.utility,
        x.blocked,
      ]),
    ),
    '<h2>Tables 5–6 — τ × K ablation (1 = External reached the chain tip)</h2>',
    smallMultiples(r),
    '<p>Gold outline: rows where increasing K flips the outcome.</p>',
    '<h3>Table 5 (Coarse) and Table 6 (LmSelfEval w0=0.9, d=0.7): ours / paper per cell</h3>',
    table(
      ['τ', ...KS.map((K) => `T5 K=${K}`), ...KS.map((K) => `T6 K=${K}`)],
      TAUS.map((tau) => {
        const t = tau.toFixed(2);
        const cell = (
          alg: string,
          w0: string,
          d: string,
          K: number,
          paper: readonly number[] | undefined,
          j: number,
        ): string => {
          const ours = r.ablation.find(
            (c) =>
              c.algorithm === alg &&
              c.judge_init === w0 &&
              c.judge_decay === d &&
              c.tau === tau &&
              c.K === K,
          )?.propagated;
          return `${pv(ours)} / ${pv(paper?.[j])}`;
        };
        return [
          t,
          ...KS.map((K, j) => cell('coarse', '', '', K, PAPER.table5[t], j)),
          ...KS.map((K, j) => cell('lm_self_eval', '0.9', '0.7', K, PAPER.table6[t], j)),
        ];
      }),
    ),
    '<h2>Table 8 — benign dispatch rate</h2>',
    table(
      ['defence', 'workflow', 'dispatch rate', 'paper'],
      r.utility.map((x) => {
        const j = [
          'benign_direct',
          'benign_derived',
          'benign_external_qa',
          'benign_external_derived_qa',
        ].indexOf(x.workflow);
        return [x.defense, x.workflow, x.dispatch_rate, pv(PAPER.table8[x.defense]?.[j])];
      }),
    ),
    '<h2>Table 9 — harness-level baselines</h2>',
    table(
      ['profile', 'attack blocked', 'paper', 'benign kept', 'paper', 'mixed kept', 'paper'],
      Object.entries(t9).map(([k, v]) => {
        const p = (PAPER.table9 as Record<string, readonly string[]>)[k] ?? [];
        return [k, ...besidePaper([v[0], v[1], v[2]], p)];
      }),
    ),
    '<h2>Table 10 and the 13-action mixed-context matrix</h2>',
    bars('Mixed-context actions recovered', [
      {
        label: 'coarse taint',
        value: r.mixed.filter((m) => m.taint_recovered === 1).length,
        max: r.mixed.length,
      },
      {
        label: 'parameter authority',
        value: r.mixed.filter((m) => m.authority_recovered === 1).length,
        max: r.mixed.length,
        note: `(attacker values blocked ${r.mixed.filter((m) => m.authority_blocked === 1).length}/${r.mixed.length})`,
      },
    ]),
    table(
      ['workload', 'scenario', 'taint', 'paper', 'authority', 'paper', 'utility', 'paper'],
      r.mixed.map((m) => {
        const p = m.workload === 'banking_transfer' ? (PAPER.table10[m.scenario] ?? []) : [];
        const auth = m.authority_verdict === 'repair_and_retry' ? 'repair' : m.authority_verdict;
        const recovered = m.authority_recovered === 1 ? 'yes' : 'no';
        return [m.workload, m.scenario, ...besidePaper([m.taint_verdict, auth, recovered], p)];
      }),
    ),
    '<h2>Table 11 — adaptive laundering boundaries</h2>',
    table(
      ['scenario', 'τ', 'K', 'ext. w', 'propagated', 'fired', 'paper fired'],
      r.adaptive.map((x, i) => [
        x.scenario,
        x.tau,
        x.K,
        x.ext_w,
        x.propagated,
        x.fired,
        pv(PAPER.table11[i]),
      ]),
    ),
    '<h2>Table 12 — strict mitigations</h2>',
    table(
      [
        'scenario',
        'strict knob',
        'default fired',
        'paper',
        'knob propagated',
        'paper',
        'knob fired',
        'paper',
        'full strict fired',
      ],
      r.mitigations.map((x) => {
        const p = PAPER.table12[x.scenario] ?? [];
        return [
          x.scenario,
          x.mitigation,
          ...besidePaper([x.default_fired, x.strict_propagated, x.strict_fired], p),
          x.full_strict_fired,
        ];
      }),
    ),
    '<h2>Table 13 — strict-mode utility</h2>',
    table(
      ['knob', 'workflow', 'dispatch rate', 'paper'],
      r.strictUtility.map((x) => {
        const j = [
          'benign_direct',
          'benign_derived',
          'benign_external_qa',
          'benign_external_derived_qa',
        ].indexOf(x.workflow);
        return [
          x.knob,
          x.workflow,
          x.dispatch_rate,
          pv((PAPER.table13 as Record<string, readonly number[]>)[x.knob]?.[j]),
        ];
      }),
    ),
    ...adaptiveSection(r),
    '<h2>Documented choices</h2>',
    `<ul>${CHOICES.map((c) => `<li>${h(c)}</li>`).join('')}</ul>`,
  ].join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MemLineage evaluation</title>
<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}th{background:#f5f5f5}h2{margin-top:1.6em}</style>
</head><body>
${body}
</body></html>
`;
}

/** Issue 18: the adaptive-attacker suite, its ablation, and the banking environment under it. */
function adaptiveSection(r: Results): string[] {
  const a = r.adaptiveSuite;
  const profiles = [...new Set(a.table.map((t) => t.profile))];
  const families = [...new Set(a.table.map((t) => t.family))];
  const get = (p: string, f: string): string => {
    const t = a.table.find((x) => x.profile === p && x.family === f);
    if (t === undefined) return '';
    return t.asr !== null ? `${f2(t.asr)}` : `${f2(t.benign_dispatch ?? 0)} dispatched`;
  };
  const mechanisms = [...new Set(a.ablation.map((x) => x.disabled))];
  const abFamilies = [...new Set(a.ablation.map((x) => x.family))];
  const ab = (m: string, f: string): string => {
    const x = a.ablation.find((y) => y.disabled === m && y.family === f);
    const base = a.ablation.find((y) => y.disabled === 'none' && y.family === f);
    if (x === undefined) return '';
    const changed =
      base !== undefined &&
      (x.asr !== base.asr || x.forged_trust_visible !== base.forged_trust_visible);
    return `${f2(x.asr)}${x.forged_trust_visible > 0 ? ' (model sees forged TRUSTED)' : ''}${changed ? ' ◀' : ''}`;
  };
  const bankFamilies = [...new Set(r.bankingAdaptive.map((b) => b.family))];
  return [
    '<h2>Adaptive attackers (issue 18) — ASR per profile, beside the verbatim attack</h2>',
    `<p>The agent is fully steered: whenever planted content reaches its context it makes the attacker's target call (already decoded). ASR is therefore the defence alone. Rows: attack families (the benign row is the dispatch rate of ${a.cells.filter((c) => c.benign && c.profile === profiles[0]).length} mixed-context workloads: the user's own values, spelled in many ways, beside untrusted and obfuscated content). Agent: ${h(r.agentName)}.</p>`,
    table(
      ['family', ...profiles],
      families.map((f) => [f, ...profiles.map((p) => get(p, f))]),
    ),
    '<h3>Ablation — memlineage with one mechanism switched off (◀ = differs from all on)</h3>',
    '<p>The gate reads segments through the seal, so switching sentinel escaping off changes what a <em>model</em> reading the text sees (a forged TRUSTED header), not what the gate decides.</p>',
    table(
      ['family', ...mechanisms.map((m) => (m === 'none' ? 'all on' : `no ${m}`))],
      abFamilies.map((f) => [f, ...mechanisms.map((m) => ab(m, f))]),
    ),
    '<h3>Banking environment under adaptive attackers (6 pairs per cell: ASR / utility)</h3>',
    table(
      ['defence', ...bankFamilies],
      [...new Set(r.bankingAdaptive.map((b) => b.defense))].map((d) => [
        d,
        ...bankFamilies.map((f) => {
          const b = r.bankingAdaptive.find((x) => x.defense === d && x.family === f);
          return b === undefined ? '' : `${b.asr}/${b.pairs} · ${b.utility}/${b.pairs}`;
        }),
      ]),
    ),
  ];
}
