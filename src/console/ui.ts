/**
 * @module console/ui
 * Small shared pieces of the console's screens: headings, status lines and error boxes.
 */
import { ApiError } from './api.js';
import { h } from './dom.js';

/** A screen's title; focused on navigation so screen readers announce the new screen. */
export function title(text: string, sub?: string): HTMLElement {
  return h('div', { class: 'screen-head' }, h('h1', { tabindex: -1, id: 'screen-title' }, text), sub === undefined ? null : h('p', { class: 'sub' }, sub));
}

export function errorBox(e: unknown): HTMLElement {
  if (e instanceof ApiError)
    return h('div', { class: 'error', role: 'alert' }, h('strong', {}, `${e.code}`), ` (HTTP ${e.status}): ${e.message}`);
  return h('div', { class: 'error', role: 'alert' }, e instanceof Error ? e.message : String(e));
}

export function loading(what: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, `Loading ${what}…`);
}

export function when(iso: string | undefined): string {
  if (iso === undefined) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** A table with a caption and header row. */
export function table(caption: string, head: readonly string[], rows: readonly HTMLElement[]): HTMLElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows),
  );
}

export function tierLabel(tier: string, label?: string): HTMLElement {
  return h('span', { class: `tl l-${(label ?? '').toLowerCase()}` }, label === undefined ? tier : `${tier} · ${label}`);
}
