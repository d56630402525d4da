/**
 * @module console/views/entries
 * The entry explorer, for investigation (issue 24): entries newest first in every state —
 * every principal's for an operator, the caller's own scope for anyone else — with text (or
 * by-meaning) search, filters and keyset paging, all kept in the hash (`#/entries?q=…`) so a view
 * is a link. Every row was re-verified by the server; one that failed is shown as failed, with
 * its reason code, never left out. One entry: its tier, label and authority, its content (as
 * text), its inclusion proof verified here in the browser, its lineage graph and its history.
 */
import {
  type HistoryEvent,
  type InvestigatedEntry,
  type InvestigationPage,
  type InvestigationRow,
  type LineageGraph,
  type MemoryRecord,
  type Principal,
  ApiError,
  api,
  enc,
} from '../api.js';
import { badge, facts, h, mount, shortId } from '../dom.js';
import { renderGraph } from '../graph.js';
import { errorBox, loading, table, tierLabel, title, when } from '../ui.js';
import { type Check, type InclusionProofJson, checkInclusion, fromBase64 } from '../verify.js';
import { loadVkey } from './log.js';

const TIERS = ['OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED', 'EXTERNAL_TOOL', 'EXTERNAL_WEB'];
const LABELS = ['TRUSTED', 'DERIVED_TRUSTED', 'DERIVED_UNTRUSTED', 'EXTERNAL'];
const STATES = ['live', 'deleted', 'superseded', 'expired'];
/** The filters the hash may carry, as `/v1/investigate` names them. */
const FILTERS = ['q', 'semantic', 'owner', 'tier', 'label', 'status', 'kind', 'source', 'from', 'to', 'limit', 'cursor'] as const;

/** `datetime-local` (local time, no zone) → ISO 8601 UTC; '' when empty or unreadable. */
function localToIso(v: string): string {
  if (v === '') return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** ISO 8601 → the `datetime-local` value showing it. */
function isoToLocal(v: string | null): string {
  if (v === null || v === '') return '';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** One labelled filter field (label above its control). */
function field(id: string, label: string, control: HTMLElement): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function select(id: string, label: string, values: readonly string[], current: string | null): HTMLElement {
  return field(id, label, h('select', { id, name: id }, h('option', { value: '' }, 'any'), ...values.map((v) => h('option', { value: v, selected: v === current }, v))));
}

function text(id: string, label: string, current: string | null, attrs: Record<string, string | number> = {}): HTMLElement {
  return field(id, label, h('input', { id, name: id, type: 'text', value: current ?? '', ...attrs }));
}

/** The hash of the list with these filters. */
function listHash(p: URLSearchParams): string {
  const q = p.toString();
  return q === '' ? '#/entries' : `#/entries?${q}`;
}

/** `user:5e5083f6…4dec6` → `user:5e50…dec6` (the full id is in the title). */
function shortPrincipal(id: string): string {
  const i = id.indexOf(':');
  const rest = id.slice(i + 1);
  return rest.length > 10 ? `${id.slice(0, i + 1)}${rest.slice(0, 4)}\u2026${rest.slice(-4)}` : id;
}

/** Verification cell: a pass badge, or FAILED with the code and stage. */
function verification(r: InvestigationRow): HTMLElement {
  if (r.verified) return badge(true, 'VERIFIED');
  return h('span', {}, badge(false, 'FAILED'), ' ', h('code', { class: 'fail-code' }, r.failure?.code ?? '?'), h('div', { class: 'muted' }, `check: ${r.failure?.stage ?? '?'}`));
}

function listRow(r: InvestigationRow, operator: boolean): HTMLElement {
  const m = r.memory;
  const st = r.stored;
  const owner = m?.ns ?? st?.owner;
  const content = m?.content ?? st?.content;
  const cells = [
    h('td', {}, h('a', { href: `#/entries/${enc(r.id)}`, 'aria-label': `Open entry ${r.id}` }, shortId(r.id))),
    operator
      ? h('td', {},
          owner === undefined
            ? '—'
            : h('a', { href: listHash(new URLSearchParams({ owner })), 'data-owner': owner, title: `${owner} — show only this principal\u2019s entries`, 'aria-label': `Only entries of ${owner}` }, h('code', {}, shortPrincipal(owner))),
          m === undefined && st !== undefined ? h('div', { class: 'muted' }, 'as stored, unverified') : null)
      : null,
    h('td', {}, h('span', { class: `state s-${r.status}` }, r.status)),
    h('td', {}, verification(r)),
    h('td', {}, m !== undefined ? tierLabel(m.tier, m.label) : st !== undefined ? h('span', {}, st.tier, h('span', { class: 'muted' }, ' (unverified)')) : '—'),
    h('td', {}, m?.kind ?? st?.kind ?? '—'),
    // Stored content is hostile: text only.
    h('td', {}, content === undefined ? h('span', { class: 'muted' }, 'not shown (failed verification)') : h('span', { class: 'clip' }, content)),
    h('td', {}, when(m?.createdAt ?? st?.createdAt), r.score === undefined ? null : h('div', { class: 'muted' }, `similarity ${r.score.toFixed(3)}`)),
  ];
  return h('tr', { 'data-entry': r.id, 'data-verified': r.verified ? 'true' : 'false', 'data-status': r.status, class: r.verified ? '' : 'unverified' }, ...cells);
}

export async function entriesView(root: HTMLElement, me: Principal, params: URLSearchParams): Promise<void> {
  const operator = me.kind === 'operator';
  const p = new URLSearchParams();
  for (const k of FILTERS) {
    const v = params.get(k);
    if (v !== null && v !== '') p.set(k, v);
  }
  const body = h('div', {}, loading('entries'));
  const idInput = h('input', { id: 'open-id', type: 'text', required: true, placeholder: 'entry id (UUID)', pattern: '[A-Za-z0-9][A-Za-z0-9._:-]{0,127}' });
  const open = h(
    'form',
    { class: 'toolbar', onsubmit: (e: Event) => { e.preventDefault(); location.hash = `#/entries/${enc(idInput.value.trim())}`; } },
    h('label', { for: 'open-id' }, 'Open an entry by id '),
    idInput,
    h('button', { type: 'submit' }, 'Open'),
  );
  const semantic = h('input', { id: 'f-semantic', name: 'f-semantic', type: 'checkbox', checked: p.get('semantic') === 'true' });
  const filters = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Search and filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const next = new URLSearchParams();
        const val = (id: string): string => ((document.getElementById(id) as HTMLInputElement | HTMLSelectElement | null)?.value ?? '').trim();
        for (const [k, id] of [['q', 'f-q'], ['owner', 'f-owner'], ['tier', 'f-tier'], ['label', 'f-label'], ['status', 'f-status'], ['kind', 'f-kind'], ['source', 'f-source'], ['limit', 'f-limit']] as const) {
          const v = val(id);
          if (v !== '') next.set(k, v);
        }
        if (semantic.checked && next.has('q')) next.set('semantic', 'true');
        for (const [k, id] of [['from', 'f-from'], ['to', 'f-to']] as const) {
          const v = localToIso(val(id));
          if (v !== '') next.set(k, v);
        }
        location.hash = listHash(next);
      },
    },
    h('div', { class: 'fgrid' },
      h('div', { class: 'field wide' },
        h('label', { for: 'f-q' }, 'Search text'),
        h('input', { id: 'f-q', name: 'f-q', type: 'search', value: p.get('q') ?? '', maxlength: 512, placeholder: 'words the content contains' }),
        h('span', { class: 'chk' }, semantic, h('label', { for: 'f-semantic' }, 'by meaning (live entries, most similar first)'))),
      operator ? text('f-owner', 'Principal', p.get('owner'), { placeholder: 'principal id (any)', maxlength: 256 }) : null,
      select('f-tier', 'Tier', TIERS, p.get('tier')),
      select('f-label', 'Label', LABELS, p.get('label')),
      select('f-status', 'Status', STATES, p.get('status')),
      text('f-kind', 'Kind', p.get('kind'), { maxlength: 64 }),
      text('f-source', 'Source', p.get('source'), { maxlength: 2048, placeholder: 'exact source URI' }),
      field('f-from', 'Written from', h('input', { id: 'f-from', type: 'datetime-local', value: isoToLocal(p.get('from')) })),
      field('f-to', 'Written before', h('input', { id: 'f-to', type: 'datetime-local', value: isoToLocal(p.get('to')) })),
      select('f-limit', 'Per page', ['25', '50', '100', '200'], p.get('limit')),
    ),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Search'), h('a', { href: '#/entries', id: 'f-reset' }, 'Clear filters')),
  );
  mount(
    root,
    title(
      operator ? 'Entries — every principal' : 'Entries',
      operator
        ? 'Investigation view: every principal\u2019s entries, newest first, in every state. Each row was re-verified by the server; a row that fails is shown with its reason. Your searches are recorded in the audit log (operator.investigate).'
        : 'The memories your key can see (yours and OPERATOR entries), newest first, in every state. A row that fails verification is shown with its reason.',
    ),
    open,
    filters,
    body,
  );
  try {
    const page = await api<InvestigationPage>('GET', `/v1/investigate${p.toString() === '' ? '' : `?${p.toString()}`}`);
    const failed = page.rows.filter((r) => !r.verified).length;
    const nav = h(
      'div',
      { class: 'toolbar pager' },
      p.has('cursor') ? h('a', { href: listHash(withoutCursor(p)), id: 'page-newest' }, '\u2190 Newest') : null,
      page.nextCursor === undefined ? h('span', { class: 'muted' }, p.has('cursor') ? 'Oldest entries reached.' : '') : h('a', { href: listHash(withCursor(p, page.nextCursor)), id: 'page-older' }, 'Older entries \u2192'),
    );
    if (page.rows.length === 0) {
      mount(body, h('p', { class: 'empty' }, 'No entries match.'), nav);
      return;
    }
    const head = ['Entry', ...(operator ? ['Principal'] : []), 'Status', 'Verification', 'Tier · label', 'Kind', 'Content', 'Written'];
    const caption = `${page.rows.length} entr${page.rows.length === 1 ? 'y' : 'ies'}, ${p.get('semantic') === 'true' ? 'most similar first' : 'newest first'}${failed > 0 ? ` — ${failed} FAILED verification` : ''}`;
    mount(body, failed > 0 ? h('div', { class: 'error', role: 'alert', 'data-testid': 'failed-rows' }, h('strong', {}, `${failed} entr${failed === 1 ? 'y' : 'ies'} failed verification`), ' and ', failed === 1 ? 'is' : 'are', ' shown below with the reason; their contents are not trusted.') : null, table(caption, head, page.rows.map((r) => listRow(r, operator))), nav);
  } catch (e) {
    mount(body, errorBox(e));
  }
}

function withCursor(p: URLSearchParams, cursor: string): URLSearchParams {
  const n = new URLSearchParams(p);
  n.set('cursor', cursor);
  return n;
}

function withoutCursor(p: URLSearchParams): URLSearchParams {
  const n = new URLSearchParams(p);
  n.delete('cursor');
  return n;
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

/** The inclusion proof the server sent with the entry, checked here against the pinned log key. */
async function proofSection(m: MemoryRecord, proof: InclusionProofJson): Promise<HTMLElement> {
  const out = h('div', {}, loading('the inclusion proof'));
  void (async () => {
    try {
      const vkey = await loadVkey();
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

function lineageSection(g: LineageGraph): HTMLElement {
  const ancestors = g.nodes.length - 1;
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, ancestors === 0
      ? 'No parents: this entry was not derived from other memories.'
      : `${ancestors} ancestor(s); arrows point from an entry to what it was derived from, with the attribution weight. Every node was re-verified by the server; select one to open it.${g.truncated ? ' (Cut at the node bound.)' : ''}`),
    h('div', { class: 'graph', 'data-testid': 'lineage-graph' }, renderGraph(g)),
    h('ul', { class: 'legend', 'aria-label': 'Label colours' },
      h('li', { class: 'l-trusted' }, 'TRUSTED'), h('li', { class: 'l-dtrusted' }, 'DERIVED_TRUSTED'),
      h('li', { class: 'l-duntrusted' }, 'DERIVED_UNTRUSTED'), h('li', { class: 'l-external' }, 'EXTERNAL'),
      h('li', { class: 'n-unverified' }, 'failed verification'), h('li', { class: 'n-missing' }, 'not visible')),
  );
}

async function historySection(id: string, given?: HistoryEvent[]): Promise<HTMLElement> {
  const out = h('div', {}, loading('the history'));
  void (async () => {
    try {
      // The investigation route brings it (for an operator, any principal's entry); else the
      // owner's history route.
      const history =
        given ?? (await api<{ history: HistoryEvent[] }>('GET', `/v1/memories/${enc(id)}/history`)).history;
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
      mount(out, e instanceof ApiError && e.status === 404 ? ownerOnlyHistory() : errorBox(e));
    }
  })();
  return out;
}

function ownerOnlyHistory(): HTMLElement {
  return h('p', { class: 'muted', 'data-testid': 'history-owner-only' }, 'The version history is read in the owner\u2019s scope; this entry belongs to another principal.');
}

/** A row that failed verification: why, and (for an operator) what its columns claim. */
function failedEntry(root: HTMLElement, e: InvestigatedEntry): void {
  const r = e.row;
  const st = r.stored;
  mount(
    root,
    title('Entry', r.id),
    h('div', { class: 'error', role: 'alert', 'data-testid': 'entry-failed' },
      h('strong', {}, 'FAILED verification: '), h('code', {}, r.failure?.code ?? '?'), ` (check: ${r.failure?.stage ?? '?'}). `,
      'Nothing below is trusted: the signed record does not verify, so these are the row\u2019s stored columns.'),
    facts([
      ['Status', r.status],
      ['Log position', String(r.leafIndex)],
      ['Owner (as stored)', st === undefined ? '—' : h('code', { class: 'wrap' }, st.owner)],
      ['Tier (as stored)', st?.tier ?? '—'],
      ['Kind (as stored)', st?.kind ?? '—'],
      ['Writer (as stored)', st?.writer === undefined ? '—' : h('code', { class: 'wrap' }, st.writer)],
      ['Source (as stored)', st?.source ?? '—'],
      ['Written (as stored)', when(st?.createdAt)],
    ]),
    st?.content === undefined
      ? h('p', { class: 'muted' }, 'The stored columns are shown to operators only.')
      : h('section', { 'aria-label': 'Stored content (unverified)' }, h('h2', {}, 'Stored content (unverified)'), h('pre', { class: 'content', 'data-testid': 'entry-content' }, st.content)),
    h('p', {}, h('a', { href: '#/entries' }, 'Back to entries')),
  );
}

export async function entryView(root: HTMLElement, id: string, me: Principal): Promise<void> {
  mount(root, title('Entry', id), loading('the entry'));
  let e: InvestigatedEntry;
  try {
    // The investigation route: an operator opens any principal's entry (audited), anyone else
    // its own scope; a row that fails verification comes back as such, not as a 404.
    e = await api<InvestigatedEntry>('GET', `/v1/investigate/${enc(id)}`);
  } catch (err) {
    mount(root, title('Entry', id), errorBox(err), h('p', {}, h('a', { href: '#/entries' }, 'Back to entries')));
    return;
  }
  const m = e.row.memory;
  if (!e.row.verified || m === undefined || e.proof === undefined) {
    failedEntry(root, e);
    return;
  }
  mount(
    root,
    title('Entry', m.id),
    h('div', { class: 'cols' },
      facts([
        ['Status', h('span', { class: `state s-${e.row.status}`, 'data-testid': 'entry-status' }, e.row.status)],
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
    h('section', { 'aria-labelledby': 'h-proof' }, h('h2', { id: 'h-proof' }, 'Inclusion proof'), await proofSection(m, e.proof)),
    h('section', { 'aria-labelledby': 'h-lineage' }, h('h2', { id: 'h-lineage' }, 'Lineage'), e.lineage === undefined ? h('p', { class: 'muted' }, 'No lineage.') : lineageSection(e.lineage)),
    h('section', { 'aria-labelledby': 'h-history' }, h('h2', { id: 'h-history' }, 'History'),
      // The investigation route brings the history in its scope (an operator's: any
      // principal's entry); an older server's does not, and then only the owner may read it.
      e.history !== undefined || m.ns === me.id || m.tier === 'OPERATOR'
        ? await historySection(m.id, e.history)
        : ownerOnlyHistory()),
  );
}
