/**
 * @module adapters/memory
 * The in-memory storage backend (optionally journalled to a file).
 */
export { MemoryBackend, type MemoryBackendOptions } from './backend.js';
