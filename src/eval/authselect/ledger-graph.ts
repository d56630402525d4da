/**
 * @module eval/authselect/ledger-graph
 * The AuthSelect harness's graph source and writer straight over a ledger: every passage,
 * extraction and attack object is committed as given — no screening, review, quota or TTL.
 * The experiment needs exactly that: its threat model (AuthSelect §6) is a compromised peer
 * whose signed relations are already in the store, and the figures measure what selection
 * does with them; the write path would hold the attack objects for review and there would be
 * nothing to measure. This is the eval harnesses' named exemption from the dependency rule
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
