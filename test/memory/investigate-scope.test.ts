/**
 * Cross-principal reads are a privileged path (issue 24): the investigation listing reads every
 * principal's entries on the system scope for an operator, audited — and nothing else gains such
 * a read. A dependency rule cannot see method calls, so this reads the source instead:
 * - `browseEntries` (the listing that, on the system scope, spans principals) is called only by
 *   `src/memory/read/investigate.ts` (adapters implement it, ports declare it, testing checks it);
 * - in that module the system scope is taken only behind the operator check;
 * - no other module lists or searches entries on the root storage, except the two that did so
 *   before, named here with why (a new one fails this test until it is reviewed and added).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(process.cwd(), 'src');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...sources(p));
    else if (d.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Files outside the storage implementation (adapters), its declaration (ports) and its checks (testing). */
const callers = sources(SRC)
  .map((p) => relative(process.cwd(), p))
  .filter((p) => !/^src\/(adapters|ports|testing)\//.test(p));

/** Code without comments, so prose naming a method does not count as a call. */
const code = (p: string): string =>
  readFileSync(p, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

const INVESTIGATE = 'src/memory/read/investigate.ts';

/** Root-storage entry listings that predate the investigation view, and why each is allowed. */
const KNOWN_ROOT_LISTINGS: Record<string, string> = {
  // The whole-store audit (`memwarden audit`): deployment tooling, re-verifies every row.
  'src/memory/log/store-audit.ts': 'whole-store audit',
  // The read model's log follower (ADR 0037) loads the entries other processes committed into
  // the in-process read model, which answers each query inside the caller's scope.
  'src/memory/read/follower.ts': 'read model follower',
  // The AuthSelect eval harness replays a whole test ledger it built itself (no user data).
  'src/eval/authselect/ledger-graph.ts': 'eval harness over its own ledger',
};

describe('cross-principal reads stay in the investigation module', () => {
  it('only investigate.ts calls browseEntries', () => {
    const users = callers.filter((p) => /\bbrowseEntries\b/.test(code(p)));
    expect(users).toEqual([INVESTIGATE]);
  });

  it('investigate.ts takes the system scope only behind the operator check', () => {
    const src = code(INVESTIGATE);
    const uses = [...src.matchAll(/this\.ctx\.storage\b(.{0,20})/g)].map((m) => m[0]);
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) expect(u, u).toMatch(/^this\.ctx\.storage(\.getPrincipal\(| : view;)/);
    const scopes = [...src.matchAll(/const scope = (.*);/g)].map((m) => m[1]);
    expect(scopes).toEqual([
      'operator ? this.ctx.storage : view',
      'operator ? this.ctx.storage : view',
    ]);
  });

  it('no other module lists or searches entries on the root storage', () => {
    const listing =
      /\bstorage\.(listEntries|listEntriesFor|searchEntries|browseEntries|scanEntries|findEntriesBy)\b/;
    const found = callers.filter((p) => listing.test(code(p))).sort();
    expect(found).toEqual(Object.keys(KNOWN_ROOT_LISTINGS).sort());
  });
});
