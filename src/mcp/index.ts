/**
 * @module mcp
 * memwarden's MCP server (edge): memory tools and the reference knowledge-graph tool set over
 * stdio or Streamable HTTP. See `memwarden mcp --help`.
 */
export { KG_OUTPUT_SCHEMAS, MCP_TOOLS, MEMORY_TOOL_NAMES, type MemoryToolName } from './tools.js';
export {
  KG_RESOURCE_URI,
  MCP_CONTEXT_META_KEY,
  MCP_ERROR_META_KEY,
  MCP_HELD_META_KEY,
  MCP_PROVENANCE_META_KEY,
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  McpBackend,
  type McpMemory,
  type McpServerOptions,
  callTool,
  createMcpServer,
  recordView,
  renderRecords,
  toolError,
  toolErrorCode,
} from './server.js';
export {
  type HttpOptions,
  mcpHttpHandler,
  resolveStdioPrincipal,
  serveHttp,
  serveStdio,
} from './serve.js';
