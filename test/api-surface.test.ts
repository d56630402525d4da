/**
 * Pins the public surface: adding or removing an export is a deliberate, reviewed change.
 * Runs against the built package (`npm test` builds first) through its own exports map.
 */
import { describe, expect, it } from 'vitest';

describe('public API surface', () => {
  it('the root entry point exports exactly these names', async () => {
    const mod = await import('memwarden');
    expect(Object.keys(mod).sort()).toMatchInlineSnapshot(`
      [
        "ARTICLE_QUOTAS",
        "AuthorityLevels",
        "CoarseAttribution",
        "DEFAULT_LINEAGE_OPTIONS",
        "DEFAULT_POLICY",
        "DEFAULT_WRITE_LIMITS",
        "DetectionPipeline",
        "ErrorCodes",
        "Gate",
        "GraphMemory",
        "KnowledgeGraphTools",
        "LabelTrustingGate",
        "LmSelfEval",
        "Memory",
        "MemwardenError",
        "PrincipalKinds",
        "ScriptedJudge",
        "SmoothedRetrieval",
        "SourceTiers",
        "TrustLabels",
        "baseLabel",
        "certificate",
        "decodeSignedEntry",
        "decodeSignedTombstone",
        "effectiveAuthority",
        "emptyRoot",
        "encodeEntryBody",
        "encodeSignedEntry",
        "entryLeafData",
        "escapeContent",
        "formatVerifierKey",
        "isMemwardenError",
        "leafHash",
        "llmGenerator",
        "llmJudge",
        "loadPolicy",
        "macVerifiedRetriever",
        "mayWriteTier",
        "nearDuplicate",
        "nodeHash",
        "parseCheckpoint",
        "parseCosignerVerifierKey",
        "parseRetentionOverrides",
        "parseSegments",
        "planPoolSize",
        "propagate",
        "renderSegments",
        "retentionConfig",
        "safeDecodeSignedEntry",
        "safeLoadPolicy",
        "signingInput",
        "strictLineageOptions",
        "tombstoneLeafData",
        "verdictOf",
        "verifyCheckpoint",
        "verifyConsistency",
        "verifyCosignedCheckpoint",
        "verifyEd25519",
        "verifyInclusion",
        "voteSmoothed",
        "wordsFromRandomSource",
      ]
    `);
  });

  it('each subpath exports exactly these names', async () => {
    expect(Object.keys(await import('memwarden/storage/memory')).sort()).toEqual(['MemoryBackend']);
    expect(Object.keys(await import('memwarden/storage/pglite')).sort()).toEqual(['PgliteBackend']);
    expect(Object.keys(await import('memwarden/storage/pg')).sort()).toEqual(['PgBackend']);
    expect(Object.keys(await import('memwarden/testing')).sort()).toEqual([
      'ManualClock',
      'MemoryKeySource',
      'SeededRandom',
      'storageConformanceCases',
    ]);
    for (const sub of ['server', 'llm', 'ai-sdk', 'langgraph', 'mcp', 'mem0', 'embeddings', 'testing/llm', 'eval/memlineage', 'smsr']) {
      expect(Object.keys(await import(`memwarden/${sub}`)).sort()).toMatchSnapshot(sub);
    }
  });
});
