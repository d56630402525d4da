/**
 * @module console/views/reviews
 * The review queue: writes held by screening, with the detector findings that held them.
 * An operator approves (the held write is replayed, signed and logged, marked reviewed-by)
 * or rejects; anyone else sees their own held writes.
 */
import { type Principal, type ReviewItem, api, enc } from '../api.js';
import { h, mount, shortId } from '../dom.js';
import { errorBox, loading, table, title, when } from '../ui.js';

type Filter = 'pending' | 'approved' | 'rejected' | 'all';

/** "detector: reason" → its two parts, for a readable findings list. */
function finding(r: string): HTMLElement {
  const i = r.indexOf(':');
  return i > 0
    ? h('li', {}, h('strong', {}, r.slice(0, i)), r.slice(i))
    : h('li', {}, r);
}

export async function reviewsView(root: HTMLElement, me: Principal, filter: Filter = 'pending'): Promise<void> {
  const operator = me.kind === 'operator';
  const status = h('p', { role: 'status', class: 'status', id: 'review-status' });
  const body = h('div', {}, loading('the review queue'));
  const select = h(
    'select',
    { id: 'review-filter', onchange: () => void reviewsView(root, me, select.value as Filter) },
    ...(['pending', 'approved', 'rejected', 'all'] as const).map((f) => h('option', { value: f, selected: f === filter }, f)),
  );
  mount(
    root,
    title('Review queue', operator
      ? 'Writes held by screening. Approve to sign and log the write as you reviewed it; reject to drop it (recorded in the audit log).'
      : 'Your writes held by screening. Only an operator can approve or reject them.'),
    h('div', { class: 'toolbar' }, h('label', { for: 'review-filter' }, 'Show '), select),
    status,
    body,
  );
  let items: ReviewItem[];
  try {
    const q = filter === 'all' ? '' : `?status=${filter}`;
    items = (await api<{ reviews: ReviewItem[] }>('GET', `/v1/reviews${q}`)).reviews;
  } catch (e) {
    mount(body, errorBox(e));
    return;
  }
  if (items.length === 0) {
    mount(body, h('p', { class: 'empty' }, `No ${filter === 'all' ? '' : `${filter} `}review items.`));
    return;
  }
  const decide = async (item: ReviewItem, decision: 'approve' | 'reject', reason: string): Promise<void> => {
    status.textContent = `${decision === 'approve' ? 'Approving' : 'Rejecting'} ${item.id}…`;
    try {
      const r = await api<ReviewItem>('POST', `/v1/reviews/${enc(item.id)}/${decision}`, {
        body: reason.trim() === '' ? {} : { reason: reason.trim() },
      });
      await reviewsView(root, me, filter);
      const st = document.getElementById('review-status');
      if (st !== null)
        st.textContent = `Review ${r.id} ${r.status}${r.memoryId === undefined ? '' : ` — stored as entry ${r.memoryId}`}.`;
    } catch (e) {
      mount(status, errorBox(e));
    }
  };
  const rows = items.map((it) => {
    const reasonId = `reason-${it.id}`;
    const reason = h('input', { id: reasonId, type: 'text', maxlength: 512, placeholder: 'reason (optional)' });
    const actions =
      operator && it.status === 'pending'
        ? h(
            'div',
            { class: 'actions' },
            h('label', { for: reasonId, class: 'sr-only' }, `Reason for review ${it.id}`),
            reason,
            h('button', { type: 'button', class: 'approve', 'aria-label': `Approve review ${it.id}`, onclick: () => void decide(it, 'approve', reason.value) }, 'Approve'),
            h('button', { type: 'button', class: 'reject', 'aria-label': `Reject review ${it.id}`, onclick: () => void decide(it, 'reject', reason.value) }, 'Reject'),
          )
        : h('span', {}, it.status === 'pending' ? 'awaiting an operator' : `${it.status} by ${it.decidedBy ?? '?'}`,
            it.memoryId === undefined ? null : h('a', { href: `#/entries/${enc(it.memoryId)}`, class: 'block' }, 'open the stored entry'));
    return h(
      'tr',
      { 'data-review': it.id },
      h('td', {}, shortId(it.id), h('div', { class: 'muted' }, when(it.createdAt))),
      h('td', {}, h('code', { class: 'wrap' }, it.principal)),
      h('td', {}, it.tier),
      h('td', {}, h('ul', { class: 'findings' }, ...it.reasons.map(finding))),
      // Stored content is hostile: text only.
      h('td', {}, h('pre', { class: 'content' }, it.content)),
      h('td', {}, h('span', { class: `st st-${it.status}` }, it.status)),
      h('td', {}, actions),
    );
  });
  mount(body, table(`${items.length} review item(s)`, ['Review', 'Principal', 'Tier', 'Findings', 'Content', 'Status', 'Decision'], rows));
}
