/**
 * @module console/views/gate
 * The sensitive-action gate's recorded decisions (one audit event per `checkAction`), newest
 * first: your own, or every principal's for an operator.
 */
import { type GateDecision, api } from '../api.js';
import { h, mount } from '../dom.js';
import { errorBox, loading, table, title, when } from '../ui.js';

const VERDICT_CLASS: Record<string, string> = {
  allow: 'v-allow',
  deny: 'v-deny',
  require_user: 'v-user',
  strip_and_retry: 'v-retry',
  repair_and_retry: 'v-retry',
};

export async function gateView(root: HTMLElement): Promise<void> {
  const body = h('div', {}, loading('gate decisions'));
  mount(root, title('Gate decisions', 'Every verdict of the sensitive-action gate on a proposed tool call, with the weakest lineage label the call relied on.'), body);
  try {
    const { decisions } = await api<{ decisions: GateDecision[] }>('GET', '/v1/gate/decisions?limit=200');
    if (decisions.length === 0) {
      mount(body, h('p', { class: 'empty' }, 'No gate decisions recorded yet.'));
      return;
    }
    const rows = decisions.map((d) =>
      h(
        'tr',
        { 'data-verdict': d.verdict },
        h('td', {}, when(d.at)),
        h('td', {}, h('code', { class: 'wrap' }, d.principal)),
        h('td', {}, h('code', {}, d.tool)),
        h('td', {}, h('span', { class: `verdict ${VERDICT_CLASS[d.verdict] ?? ''}` }, d.verdict)),
        h('td', {}, d.reason),
        h('td', {}, d.sensitive ? 'yes' : 'no'),
        h('td', {}, d.weakestLabel ?? '—'),
        h('td', {}, h('details', {}, h('summary', {}, 'audit record'), h('pre', { class: 'content' }, JSON.stringify(d.audit, null, 2)))),
      ),
    );
    mount(body, table(`${decisions.length} decision(s), newest first`, ['When', 'Principal', 'Tool', 'Verdict', 'Reason', 'Sensitive', 'Weakest label', 'Details'], rows));
  } catch (e) {
    mount(body, errorBox(e));
  }
}
