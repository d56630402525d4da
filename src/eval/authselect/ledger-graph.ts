/**
 * @module eval/authselect/ledger-graph
 * A graph source and writer straight over a ledger: every object is committed as given — no
 * screening, review, quota or TTL. The graph memory unit tests write through it; the AuthSelect
 * evaluation uses only its source (the whole store it built, in log order, verified) — its
 * passages and attacks go through `Memory.graph`'s write path (issue 19, ADR 0082,
 * `world.ts`). The writer is the named exemption from the dependency rule
 * `commit-only-from-the-write-path` (.dependency-cruiser.cjs); no product channel has one.
 */
import { toMemoryRecord } from '../../memory/read/records.js';
import type { GraphSource, GraphWriter } from '../../memory/graph/graph.js';
import { committerOf } from '../../memory/log/commit.js';
import type { Ledger } from '../../memory/log/ledger.js';

export function ledgerGraph(ledger: Ledger): { source: GraphSource; writer: GraphWriter } {
  const committer = committerOf(ledger);
  return {
    source: {
      list: (after, limit) => ledger.storage.listEntries({ afterLeafIndex: after, limit }),
      verify: (s) => ledger.verifyStored(s),
    },
    writer: {
      async write(items, ctx) {
        const out = [];
        for (const it of items) {
          const r = await committer.write({
            writer: ctx.principal,
            content: it.content,
            tier: ctx.tier,
            kind: it.kind,
            ...(it.parents === undefined || it.parents.length === 0
              ? {}
              : { parents: it.parents, weights: it.parents.map(() => 1) }),
          });
          out.push({
            status: 'stored' as const,
            memory: toMemoryRecord(r.entry, r.leafIndex, r.bytes),
          });
        }
        return out;
      },
    },
  };
}
