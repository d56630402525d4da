/**
 * @module console/views/reports
 * The evaluation reports `memwarden eval …` wrote. A report opens in a sandboxed frame through
 * a single-use ticket URL (a frame cannot send the bearer key); the server serves it with a
 * no-script policy, and the frame's sandbox forbids scripts too.
 */
import { type Report, api, enc } from '../api.js';
import { h, mount } from '../dom.js';
import { errorBox, loading, table, title, when } from '../ui.js';

export async function reportsView(root: HTMLElement, open?: string): Promise<void> {
  const body = h('div', {}, loading('the evaluation reports'));
  const frame = h('div', { class: 'report-frame' });
  mount(root, title('Evaluation reports', 'Replays of the published attacks against memwarden (memwarden eval …), as the harness wrote them.'), body, frame);
  const show = async (r: Report): Promise<void> => {
    try {
      const t = await api<{ url: string }>('POST', `/v1/reports/${enc(r.name)}/ticket`);
      if (!t.url.startsWith('/console/report/')) throw new Error('unexpected report URL');
      mount(frame, h('h2', {}, r.title || r.name), h('iframe', { src: t.url, sandbox: '', title: `Evaluation report ${r.name}`, referrerpolicy: 'no-referrer', 'data-testid': 'report-frame' }));
    } catch (e) {
      mount(frame, errorBox(e));
    }
  };
  try {
    const { reports } = await api<{ reports: Report[] }>('GET', '/v1/reports');
    if (reports.length === 0) {
      mount(body, h('p', { class: 'empty' }, 'No reports found. Run ', h('code', {}, 'memwarden eval memlineage'), ' (writes eval-out/memlineage) and start serve with ', h('code', {}, '--reports eval-out'), '.'));
      return;
    }
    const rows = reports.map((r) =>
      h('tr', {},
        h('td', {}, h('code', {}, r.name)),
        h('td', {}, r.title),
        h('td', {}, when(r.modifiedAt)),
        h('td', {}, `${Math.round(r.bytes / 1024)} KiB`),
        h('td', {}, h('button', { type: 'button', 'aria-label': `Open report ${r.name}`, onclick: () => void show(r) }, 'Open')),
      ),
    );
    mount(body, table(`${reports.length} report(s)`, ['Name', 'Title', 'Written', 'Size', ''], rows));
    const first = reports.find((r) => r.name === open);
    if (first !== undefined) await show(first);
  } catch (e) {
    mount(body, errorBox(e));
  }
}
