/**
 * @module console/views/entries
 * The entry explorer: the principal's entries, and one entry's tier, label and authority, its
 * content (as text), its inclusion proof verified here in the browser, its lineage graph and
 * its history.
 */
import {
  type HistoryEvent,
  type LineageGraph,
  type MemoryRecord,
  api,
  enc,
} from '../api.js';
import { badge, facts, h, mount, shortId } from '../dom.js';
import { renderGraph } from '../graph.js';
import { errorBox, loading, table, tierLabel, title, when } from '../ui.js';
import { type Check, type InclusionProofJson, checkInclusion, fromBase64 } from '../verify.js';
import { loadVkey } from './log.js';

export async function entriesView(root: HTMLElement): Promise<void> {
  const body = h('div', {}, loading('your entries'));
  const idInput = h('input', { id: 'open-id', type: 'text', required: true, placeholder: 'entry id (UUID)', pattern: '[A-Za-z0-9][A-Za-z0-9._:-]{0,127}' });
  const form = h(
    'form',
    {
      class: 'toolbar',
      onsubmit: (e: Event) => {
        e.preventDefault();
        location.hash = `#/entries/${enc(idInput.value.trim())}`;
      },
    },
    h('label', { for: 'open-id' }, 'Open an entry by id '),
    idInput,
    h('button', { type: 'submit' }, 'Open'),
  );
  mount(root, title('Entries', 'The memories your key can see (yours and OPERATOR entries), newest log position last.'), form, body);
  try {
    const { memories } = await api<{ memories: MemoryRecord[] }>('GET', '/v1/memories?limit=200');
    if (memories.length === 0) {
      mount(body, h('p', { class: 'empty' }, 'No entries visible to this key.'));
      return;
    }
    const rows = memories.map((m) =>
      h(
        'tr',
        {},
        h('td', {}, h('a', { href: `#/entries/${enc(m.id)}`, 'aria-label': `Open entry ${m.id}` }, shortId(m.id))),
        h('td', {}, tierLabel(m.tier, m.label)),
        h('td', {}, m.authority),
        h('td', {}, m.parents.length),
        h('td', {}, h('span', { class: 'clip' }, m.content)),
        h('td', {}, when(m.createdAt)),
      ),
    );
    mount(body, table(`${memories.length} entries`, ['Entry', 'Tier · label', 'Authority', 'Parents', 'Content', 'Created'], rows));
  } catch (e) {
    mount(body, errorBox(e));
  }
}

function checksList(checks: readonly Check[], label: string, testid: string): HTMLElement {
  const ok = checks.length > 0 && checks.every((c) => c.ok);
  return h(
    'section',
    { class: `checks ${ok ? 'pass' : 'fail'}`, 'aria-label': label, 'data-testid': testid, 'data-result': ok ? 'pass' : 'fail' },
    h('h3', {}, label, ' ', badge(ok, 'VERIFIED', 'FAILED')),
    h('ol', {}, ...checks.map((c) => h('li', { class: c.ok ? 'ok' : 'bad' }, badge(c.ok), ' ', h('strong', {}, c.name), h('div', { class: 'muted' }, c.detail)))),
  );
}

/** A copy of the proof with one bit flipped (in the audit path, else in the signed note). */
function tamper(p: InclusionProofJson): { proof: InclusionProofJson; what: string } {
  const first = p.hashes[0];
  if (first !== undefined) {
    const b = fromBase64(first);
    b[0] = (b[0] as number) ^ 0x01;
    const s = btoa(String.fromCharCode(...b));
    return { proof: { ...p, hashes: [s, ...p.hashes.slice(1)] }, what: 'one bit flipped in the first audit-path hash' };
  }
  const note = p.checkpoint.note.replace(/\n(\d+)\n/, (_m, n: string) => `\n${Number(n) + 1}\n`);
  return { proof: { ...p, checkpoint: { ...p.checkpoint, note } }, what: 'the tree size in the signed note changed' };
}

async function proofSection(m: MemoryRecord): Promise<HTMLElement> {
  const out = h('div', {}, loading('the inclusion proof'));
  void (async () => {
    try {
      const [proof, vkey] = await Promise.all([
        api<InclusionProofJson>('GET', `/v1/memories/${enc(m.id)}/proof`),
        loadVkey(),
      ]);
      const checks = await checkInclusion(m, proof, vkey.vkey);
      const tamperOut = h('div', {});
      const btn = h('button', {
        type: 'button',
        id: 'tamper',
        onclick: async () => {
          const t = tamper(proof);
          const bad = await checkInclusion(m, t.proof, vkey.vkey);
          mount(tamperOut, checksList(bad, `Tampered copy (${t.what}) — must fail`, 'tampered-proof'));
        },
      }, 'Show a tampered copy failing');
      mount(
        out,
        h('p', { class: 'muted' }, `Leaf ${proof.leafIndex} of ${proof.treeSize}; recomputed with WebCrypto SHA-256 and Ed25519 against the log key ${vkey.pin}.`),
        checksList(checks, 'Inclusion proof, checked in this browser', 'inclusion-proof'),
        btn,
        tamperOut,
      );
    } catch (e) {
      mount(out, errorBox(e));
    }
  })();
  return out;
}

async function lineageSection(id: string): Promise<HTMLElement> {
  const out = h('div', {}, loading('the lineage'));
  void (async () => {
    try {
      const g = await api<LineageGraph>('GET', `/v1/memories/${enc(id)}/lineage`);
      const ancestors = g.nodes.length - 1;
      mount(
        out,
        h('p', { class: 'muted' }, ancestors === 0
          ? 'No parents: this entry was not derived from other memories.'
          : `${ancestors} ancestor(s); arrows point from an entry to what it was derived from, with the attribution weight. Every node was re-verified by the server; select one to open it.${g.truncated ? ' (Cut at the node bound.)' : ''}`),
        h('div', { class: 'graph', 'data-testid': 'lineage-graph' }, renderGraph(g)),
        h('ul', { class: 'legend', 'aria-label': 'Label colours' },
          h('li', { class: 'l-trusted' }, 'TRUSTED'), h('li', { class: 'l-dtrusted' }, 'DERIVED_TRUSTED'),
          h('li', { class: 'l-duntrusted' }, 'DERIVED_UNTRUSTED'), h('li', { class: 'l-external' }, 'EXTERNAL'),
          h('li', { class: 'n-unverified' }, 'failed verification'), h('li', { class: 'n-missing' }, 'not visible')),
      );
    } catch (e) {
      mount(out, errorBox(e));
    }
  })();
  return out;
}

async function historySection(id: string): Promise<HTMLElement> {
  const out = h('div', {}, loading('the history'));
  void (async () => {
    try {
      const { history } = await api<{ history: HistoryEvent[] }>('GET', `/v1/memories/${enc(id)}/history`);
      const rows = history.map((ev) =>
        h('tr', { class: ev.id === id ? 'current' : '' },
          h('td', {}, ev.action),
          h('td', {}, h('a', { href: `#/entries/${enc(ev.id)}` }, shortId(ev.id))),
          h('td', {}, h('code', { class: 'wrap' }, ev.actor)),
          h('td', {}, when(ev.at)),
          h('td', {}, ev.memory === undefined ? ev.reason ?? '' : h('span', { class: 'clip' }, ev.memory.content)),
        ),
      );
      mount(out, table(`${history.length} event(s)`, ['Action', 'Version', 'Actor', 'When', 'Content / reason'], rows));
    } catch (e) {
      mount(out, errorBox(e));
    }
  })();
  return out;
}

export async function entryView(root: HTMLElement, id: string): Promise<void> {
  mount(root, title('Entry', id), loading('the entry'));
  let m: MemoryRecord;
  try {
    m = await api<MemoryRecord>('GET', `/v1/memories/${enc(id)}`);
  } catch (e) {
    mount(root, title('Entry', id), errorBox(e), h('p', {}, h('a', { href: '#/entries' }, 'Back to entries')));
    return;
  }
  mount(
    root,
    title('Entry', m.id),
    h('div', { class: 'cols' },
      facts([
        ['Tier', tierLabel(m.tier)],
        ['Lineage label', tierLabel(m.label, undefined)],
        ['Authority', m.authority],
        ['Kind', m.kind],
        ['Writer', h('code', { class: 'wrap' }, m.writer)],
        ['Scope', h('code', { class: 'wrap' }, m.ns)],
        ['Source', m.source ?? '—'],
        ['Created', when(m.createdAt)],
        ['Expires', m.expiresAt === undefined ? 'never' : when(m.expiresAt)],
        ['Supersedes', m.supersedes === undefined ? '—' : h('a', { href: `#/entries/${enc(m.supersedes)}` }, shortId(m.supersedes))],
        ['Reviewed by', m.reviewedBy ?? '—'],
        ['Log position', String(m.leafIndex)],
      ]),
      h('section', { 'aria-label': 'Content' }, h('h2', {}, 'Content'), h('pre', { class: 'content', 'data-testid': 'entry-content' }, m.content)),
    ),
    h('section', { 'aria-labelledby': 'h-proof' }, h('h2', { id: 'h-proof' }, 'Inclusion proof'), await proofSection(m)),
    h('section', { 'aria-labelledby': 'h-lineage' }, h('h2', { id: 'h-lineage' }, 'Lineage'), await lineageSection(m.id)),
    h('section', { 'aria-labelledby': 'h-history' }, h('h2', { id: 'h-history' }, 'History'), await historySection(m.id)),
  );
}
