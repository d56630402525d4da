/**
 * @module mcp
 * memwarden's MCP server (edge): memory tools and the reference knowledge-graph tool set over
 * stdio or Streamable HTTP. See `memwarden mcp --help`.
 */
export { MCP_TOOLS, MEMORY_TOOL_NAMES, type MemoryToolName } from './tools.js';
export {
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  McpBackend,
  type McpMemory,
  callTool,
  createMcpServer,
  recordView,
  renderRecords,
  toolError,
} from './server.js';
export {
  type HttpOptions,
  mcpHttpHandler,
  resolveStdioPrincipal,
  serveHttp,
  serveStdio,
} from './serve.js';
