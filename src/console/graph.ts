/**
 * @module console/graph
 * The lineage graph: an entry's ancestors as an SVG DAG, laid out in layers (a small
 * Sugiyama-style layout: longest-path layering, one barycentre pass to order each layer).
 * The entry sits at the bottom, its sources above it; every node is a link (keyboard
 * focusable, with a spoken label) to that entry, and colour always comes with words.
 */
import type { LineageGraph, LineageNode } from './api.js';
import { s } from './dom.js';

const W = 280;
const H = 62;
const GAP_X = 28;
const GAP_Y = 64;
const PAD = 16;

export interface Placed {
  readonly node: LineageNode;
  readonly layer: number;
  readonly x: number;
  readonly y: number;
}

/** Longest-path layers (entry = 0, parents above), then order each layer by its children. */
export function layout(g: LineageGraph): { placed: Map<string, Placed>; width: number; height: number } {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const parents = new Map<string, string[]>();
  for (const e of g.edges) parents.set(e.child, [...(parents.get(e.child) ?? []), e.parent]);
  const layer = new Map<string, number>([[g.root, 0]]);
  // Relax edges until stable; a DAG settles within |nodes| rounds (the bound also stops a cycle).
  for (let round = 0; round <= g.nodes.length; round++) {
    let changed = false;
    for (const e of g.edges) {
      const lc = layer.get(e.child);
      if (lc === undefined) continue;
      if ((layer.get(e.parent) ?? -1) < lc + 1 && lc + 1 <= g.nodes.length) {
        layer.set(e.parent, lc + 1);
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (const n of g.nodes) if (!layer.has(n.id)) layer.set(n.id, n.depth);
  const maxLayer = Math.max(0, ...layer.values());
  const rows: string[][] = Array.from({ length: maxLayer + 1 }, () => []);
  for (const n of g.nodes) rows[layer.get(n.id) ?? 0]?.push(n.id);
  const xOf = new Map<string, number>();
  rows.forEach((row, li) => {
    if (li > 0) {
      // barycentre of the already placed children in lower layers
      const children = new Map<string, number[]>();
      for (const e of g.edges) {
        const x = xOf.get(e.child);
        if (x !== undefined) children.set(e.parent, [...(children.get(e.parent) ?? []), x]);
      }
      const bc = (id: string): number => {
        const xs = children.get(id) ?? [];
        return xs.length === 0 ? Infinity : xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      row.sort((a, b) => bc(a) - bc(b) || a.localeCompare(b));
    }
    row.forEach((id, i) => xOf.set(id, i));
  });
  const widest = Math.max(1, ...rows.map((r) => r.length));
  const width = PAD * 2 + widest * W + (widest - 1) * GAP_X;
  const height = PAD * 2 + (maxLayer + 1) * H + maxLayer * GAP_Y;
  const placed = new Map<string, Placed>();
  rows.forEach((row, li) => {
    const rowWidth = row.length * W + (row.length - 1) * GAP_X;
    const x0 = (width - rowWidth) / 2;
    row.forEach((id, i) => {
      const node = byId.get(id);
      if (node === undefined) return;
      placed.set(id, { node, layer: li, x: x0 + i * (W + GAP_X), y: PAD + (maxLayer - li) * (H + GAP_Y) });
    });
  });
  return { placed, width, height };
}

const LABEL_CLASS: Record<string, string> = {
  TRUSTED: 'l-trusted',
  DERIVED_TRUSTED: 'l-dtrusted',
  DERIVED_UNTRUSTED: 'l-duntrusted',
  EXTERNAL: 'l-external',
};

const clip = (t: string, n: number): string => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

function describe(n: LineageNode): { title: string; line1: string; line2: string; cls: string } {
  const short = `${n.id.slice(0, 8)}…`;
  if (n.state === 'missing')
    return { title: `${n.id}: not visible to you`, line1: short, line2: 'not visible to you', cls: 'n-missing' };
  if (n.state === 'unverified' || n.memory === undefined)
    return {
      title: `${n.id}: FAILED verification (${n.code ?? 'unknown'})`,
      line1: `✘ ${short}`,
      line2: `unverified: ${n.code ?? ''}`,
      cls: 'n-unverified',
    };
  const m = n.memory;
  const status = n.status !== undefined && n.status !== 'live' ? ` · ${n.status}` : '';
  return {
    title: `${m.id}: ${m.tier}, label ${m.label}, authority ${m.authority}${status}. ${m.content}`,
    line1: `${m.tier} · ${m.label}${status}`,
    line2: clip(m.content.replace(/\s+/g, ' '), 40),
    cls: LABEL_CLASS[m.label] ?? 'l-external',
  };
}

/** The SVG for a lineage graph; node links go to `#/entries/<id>`. */
export function renderGraph(g: LineageGraph): SVGSVGElement {
  const { placed, width, height } = layout(g);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'group',
    'aria-label': `Lineage of ${g.root}: ${g.nodes.length} entries, ${g.edges.length} derivation edges`,
    class: 'lineage',
  });
  svg.append(
    s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))),
  );
  for (const e of g.edges) {
    const c = placed.get(e.child);
    const p = placed.get(e.parent);
    if (c === undefined || p === undefined) continue;
    const x1 = c.x + W / 2;
    const y1 = c.y;
    const x2 = p.x + W / 2;
    const y2 = p.y + H;
    const my = (y1 + y2) / 2;
    svg.append(
      s('path', { d: `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`, class: e.weight > 0 ? 'edge' : 'edge weak', 'marker-end': 'url(#arrow)' },
        s('title', {}, `${e.child} derives from ${e.parent} with weight ${e.weight}`)),
      s('text', { x: (x1 + x2) / 2 + 4, y: my, class: 'edge-w' }, `w=${Math.round(e.weight * 100) / 100}`),
    );
  }
  for (const pl of placed.values()) {
    const d = describe(pl.node);
    const root = pl.node.id === g.root;
    const a = s('a', { href: `#/entries/${encodeURIComponent(pl.node.id)}`, 'aria-label': d.title, class: 'gnode' });
    a.append(
      s('title', {}, d.title),
      s('rect', { x: pl.x, y: pl.y, width: W, height: H, rx: 6, class: `${d.cls}${root ? ' root' : ''}` }),
      s('text', { x: pl.x + 8, y: pl.y + 22, class: 'n1' }, d.line1),
      s('text', { x: pl.x + 8, y: pl.y + 44, class: 'n2' }, d.line2),
    );
    svg.append(a);
  }
  return svg;
}
