/**
 * Module boundaries of memwarden (docs/architecture.md, "Module boundaries").
 * `npm run lint` fails on any violation, so the layering is checked, not hoped for.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Cycles hide the architecture; break them with a port.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'src/core is the pure domain: it imports only itself (and node:crypto for primitives, node:url for IDNA, the Unicode confusables table).',
      from: { path: '^src/core/' },
      to: {
        pathNot: [
          '^src/core/',
          '^node_modules/cbor2/',
          '^node_modules/ajv/',
          '^node_modules/graphology',
          '^node_modules/unhomoglyph/',
          '^node_modules/wink-',
          '^crypto$',
          '^node:crypto$',
          '^url$',
          '^node:url$',
        ],
      },
    },
    {
      name: 'graph-library-only-in-core-graph',
      severity: 'error',
      comment: 'graphology (community detection) is imported only by the pure graph algorithms in src/core/graph.',
      from: { pathNot: '^src/core/graph/' },
      to: { path: '^node_modules/graphology' },
    },
    {
      name: 'nlp-only-in-core-detect',
      severity: 'error',
      comment: 'wink-nlp and its English model (the instruction screen\'s tagger) are imported only by src/core/detect.',
      from: { pathNot: '^src/core/detect/' },
      to: { path: '^node_modules/wink-' },
    },
    {
      name: 'cbor-only-in-codec',
      severity: 'error',
      comment: 'The CBOR library is imported only by the codec module.',
      from: { pathNot: '^src/core/codec/' },
      to: { path: '^node_modules/cbor2/' },
    },
    {
      name: 'pg-only-in-its-adapter',
      severity: 'error',
      from: { pathNot: '^src/adapters/pg/' },
      to: { path: '^node_modules/(pg|pg-[a-z-]+)/' },
    },
    {
      name: 'pglite-only-in-its-adapter',
      severity: 'error',
      from: { pathNot: '^src/adapters/pglite/' },
      to: { path: '^node_modules/@electric-sql/' },
    },
    {
      name: 'ai-sdk-only-in-llm-adapter-and-integration',
      severity: 'error',
      comment: 'The Vercel AI SDK (ai, @ai-sdk/*): only in the LLM adapter and the AI SDK integration.',
      from: { pathNot: ['^src/adapters/llm/', '^src/integrations/ai-sdk/'] },
      to: { path: '^node_modules/(ai|@ai-sdk/[^/]+)/' },
    },
    {
      name: 'langchain-only-in-langgraph-integration',
      severity: 'error',
      comment: 'LangChain / LangGraph packages (@langchain/*): only in the LangGraph.js store integration.',
      from: { pathNot: '^src/integrations/langgraph/' },
      to: { path: '^node_modules/@langchain/' },
    },
    {
      name: 'hono-only-in-server',
      severity: 'error',
      comment: 'Hono serves HTTP only in the two HTTP edges: the service and the witness.',
      from: { pathNot: ['^src/server/', '^src/witness/'] },
      to: { path: '^node_modules/(hono|@hono/)' },
    },
    {
      name: 'mcp-sdk-only-in-mcp',
      severity: 'error',
      comment: 'The MCP TypeScript SDK is imported only by the MCP server edge (src/mcp).',
      from: { pathNot: '^src/mcp/' },
      to: { path: '^node_modules/@modelcontextprotocol/' },
    },
    {
      name: 'prom-client-only-in-metrics',
      severity: 'error',
      from: { pathNot: '^src/server/metrics\\.ts$' },
      to: { path: '^node_modules/prom-client/' },
    },
    {
      name: 'embedding-model-only-in-its-adapter',
      severity: 'error',
      from: { pathNot: '^src/adapters/embeddings/' },
      to: { path: '^node_modules/@lat\\.md/' },
    },
    {
      name: 'ports-are-interfaces',
      severity: 'error',
      comment: 'src/ports holds interfaces only; they may name core types.',
      from: { path: '^src/ports/' },
      to: { pathNot: ['^src/ports/', '^src/core/'] },
    },
    {
      name: 'application-depends-on-core-and-ports',
      severity: 'error',
      from: { path: '^src/memory/' },
      to: { pathNot: ['^src/memory/', '^src/core/', '^src/ports/'] },
    },
    {
      name: 'adapters-do-not-reach-up',
      severity: 'error',
      comment: 'An adapter implements a port; it never imports the application or the edges.',
      from: { path: '^src/adapters/' },
      to: { path: ['^src/memory/', '^src/server/', '^src/cli/', '^src/integrations/'] },
    },
    {
      name: 'adapters-are-independent',
      severity: 'error',
      comment:
        'Each outside thing lives in its own adapter folder; adapters do not import each other, except the shared Postgres dialect in adapters/sql.',
      from: { path: '^src/adapters/([^/]+)/' },
      to: { path: '^src/adapters/', pathNot: ['^src/adapters/$1/', '^src/adapters/sql/'] },
    },
    {
      name: 'console-is-a-browser-island',
      severity: 'error',
      comment:
        'src/console is the review console, bundled for the browser by esbuild: it imports only itself (it talks to the server over HTTP, never through server or memory code).',
      from: { path: '^src/console/' },
      to: { pathNot: '^src/console/' },
    },
    {
      name: 'nothing-imports-the-console',
      severity: 'error',
      comment: 'The console is an edge of its own: the server serves its built files, it never imports its code.',
      from: { pathNot: '^src/console/' },
      to: { path: '^src/console/' },
    },
    {
      name: 'commit-only-from-the-write-path',
      severity: 'error',
      comment:
        'One door for writes (issue 17, ADR 0029): the commit capability (signing and committing entries, submitting ' +
        'self-signed ones, tombstones) lives in src/memory/log/commit.ts, and only the write path (src/memory/write/) ' +
        'imports it — every channel (server, mcp, cli, integrations, the library facade, graph memory) writes through ' +
        'the write path and its screening, limits, TTL ceilings, quotas and lineage rules. Named exemption ' +
        '"eval-harnesses-replay-attacks": src/eval/memlineage/{world,timings}.ts and src/eval/authselect/ledger-graph.ts ' +
        'commit as given, because their experiments need what the write path refuses (MemLineage: labels of the ' +
        'ablation profiles and raw ledger timings; AuthSelect: a compromised peer\'s structure already in the store). ' +
        'Edges get no exemption.',
      from: {
        pathNot: [
          '^src/memory/write/',
          '^src/memory/log/commit\\.ts$',
          '^src/eval/memlineage/(world|timings)\\.ts$',
          '^src/eval/authselect/ledger-graph\\.ts$',
        ],
      },
      to: { path: '^src/memory/log/commit\\.ts$' },
    },
    {
      name: 'commit-port-only-ledger-and-commit',
      severity: 'error',
      comment:
        'The ledger\'s group commit sequences every record of the log and checks each signed one against the ' +
        'registry at its position (ADR 0033); the commit capability reaches it through src/memory/log/commit-port.ts, ' +
        'not through a method of the Ledger. Only the ledger (which registers its sequencer there) and the commit ' +
        'capability (src/memory/log/commit.ts) import it, so holding a Ledger is not a way to write.',
      from: { pathNot: ['^src/memory/log/ledger\\.ts$', '^src/memory/log/commit\\.ts$'] },
      to: { path: '^src/memory/log/commit-port\\.ts$' },
    },
    {
      name: 'only-edges-wire',
      severity: 'error',
      comment: 'Nothing below the edges imports the CLI, server, witness or integrations.',
      from: { pathNot: ['^src/cli/', '^src/server/', '^src/mcp/', '^src/witness/', '^src/integrations/', '^src/index\\.ts$'] },
      to: { path: ['^src/cli/', '^src/server/', '^src/mcp/', '^src/witness/', '^src/integrations/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    exclude: { path: '\\.test\\.ts$' },
  },
};
