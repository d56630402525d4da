/**
 * @module console/main
 * The review console (a static single-page app served at `/console/`): sign in with an API
 * key, then the review queue, the entry explorer (an operator's investigation view across
 * principals), log status, gate decisions and the evaluation reports, one hash route each
 * (#/reviews, #/entries[?filters] and #/entries/id, #/log, #/gate, #/reports). Bundled by esbuild into dist/console/app.js; no inline script, no markup
 * parsing, no request beyond this origin.
 */
import { ApiError, type Principal, api, session, setOnUnauthorised } from './api.js';
import { h, mount } from './dom.js';
import { errorBox, title } from './ui.js';
import { entriesView, entryView } from './views/entries.js';
import { gateView } from './views/gate.js';
import { logView } from './views/log.js';
import { reportsView } from './views/reports.js';
import { reviewsView } from './views/reviews.js';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;

const SCREENS = [
  ['#/reviews', 'Review queue'],
  ['#/entries', 'Entries'],
  ['#/log', 'Log status'],
  ['#/gate', 'Gate decisions'],
  ['#/reports', 'Evaluation reports'],
] as const;

let me: Principal | undefined;

function signOut(): void {
  session.clear();
  me = undefined;
  location.hash = '#/';
  showLogin();
}

function showLogin(message?: HTMLElement): void {
  nav.hidden = true;
  mount(who);
  const key = h('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', 'aria-describedby': 'key-help' });
  const status = h('div', { id: 'login-status', 'aria-live': 'assertive' }, message ?? null);
  const form = h(
    'form',
    {
      class: 'login',
      'aria-labelledby': 'screen-title',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const k = key.value.trim();
        mount(status, h('p', { role: 'status' }, 'Checking the key…'));
        try {
          const p = await api<Principal>('GET', '/v1/me', { key: k });
          session.set(k);
          me = p;
          key.value = '';
          if (location.hash === '' || location.hash === '#/') location.hash = '#/reviews';
          else void route();
        } catch (err) {
          mount(status, err instanceof ApiError && err.status === 401
            ? h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'Refused: '), 'the server did not accept this API key.')
            : errorBox(err));
          key.focus();
        }
      },
    },
    h('label', { for: 'api-key' }, 'API key'),
    key,
    h('p', { id: 'key-help', class: 'muted' },
      'Create one with ', h('code', {}, 'memwarden principals add NAME --kind operator --data DIR'),
      '. An operator key can approve and reject held writes and sees every principal\u2019s entries and gate decisions; any other key sees only its own. The key stays in this browser tab (sessionStorage) and is sent only to this server.'),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  mount(main, title('memwarden review console', 'Sign in with an API key.'), form);
  key.focus();
}

function renderChrome(p: Principal): void {
  nav.hidden = false;
  const current = (location.hash.split('?')[0] ?? '').split('/').slice(0, 2).join('/');
  mount(
    nav,
    h('ul', {}, ...SCREENS.map(([href, label]) =>
      h('li', {}, h('a', { href, 'aria-current': href === current ? 'page' : undefined }, label)))),
  );
  mount(
    who,
    h('span', { class: 'who' }, h('span', { class: 'sr-only' }, 'Signed in as '), h('code', { title: p.id }, p.name), ` (${p.kind})`),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'),
  );
}

async function route(): Promise<void> {
  if (session.get() === null) {
    showLogin();
    return;
  }
  if (me === undefined) {
    try {
      me = await api<Principal>('GET', '/v1/me');
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      mount(main, errorBox(e));
      return;
    }
  }
  renderChrome(me);
  const [path = '', query = ''] = location.hash.split('?', 2);
  const [, screen, arg] = path.split('/');
  const id = arg === undefined || arg === '' ? undefined : decodeURIComponent(arg);
  switch (screen) {
    case 'entries':
      await (id === undefined ? entriesView(main, me, new URLSearchParams(query)) : entryView(main, id, me));
      break;
    case 'log':
      await logView(main);
      break;
    case 'gate':
      await gateView(main);
      break;
    case 'reports':
      await reportsView(main, id);
      break;
    case 'reviews':
      await reviewsView(main, me);
      break;
    default:
      location.hash = '#/reviews';
      return;
  }
  document.getElementById('screen-title')?.focus();
}

setOnUnauthorised(() => {
  session.clear();
  me = undefined;
  showLogin(h('div', { class: 'error', role: 'alert' }, 'Your key was refused; sign in again.'));
});
// The skip link focuses the content without touching the hash (the hash is the route).
document.getElementById('skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', () => void route());
void route();
