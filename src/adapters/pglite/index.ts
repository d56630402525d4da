/**
 * @module adapters/pglite
 * The embedded PGlite storage backend (PostgreSQL in WebAssembly, with pgvector).
 */
export { PgliteBackend, type PgliteBackendOptions } from './backend.js';
