/**
 * @module console/dom
 * Building the page from data without ever parsing markup: every string goes into the DOM as
 * a text node or an attribute value, never through innerHTML / insertAdjacentHTML. Stored
 * memory content is attacker-controlled (a poisoned web page, a hostile tool result), so this
 * is the only way the console puts text on screen.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

function append(el: Element, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') {
      if (!k.startsWith('on')) throw new Error(`handler must be on*: ${k}`);
      el.addEventListener(k.slice(2), v);
    } else if (/^on/i.test(k) || k === 'style' || k === 'srcdoc') {
      // Never an inline handler, inline style or inline document from data.
      throw new Error(`refused attribute ${k}`);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

/** An HTML element with attributes and text/element children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element (text children become text nodes, as for {@link h}). */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Replace everything inside `el`. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A pass / fail badge with words, not only colour. */
export function badge(ok: boolean, yes = 'PASS', no = 'FAIL'): HTMLElement {
  return h('span', { class: ok ? 'badge ok' : 'badge bad' }, ok ? `✔ ${yes}` : `✘ ${no}`);
}

/** A short id for tables (full id in the title and for screen readers). */
export function shortId(id: string): HTMLElement {
  return h('code', { title: id, 'aria-label': id }, id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);
}

/** A definition list from label/value pairs. */
export function facts(rows: readonly [string, Child][]): HTMLElement {
  const dl = h('dl', { class: 'facts' });
  for (const [k, v] of rows) dl.append(h('dt', {}, k), h('dd', {}, v));
  return dl;
}
