/**
 * @module core/filter
 * Mem0-style filters over memories: parse, evaluate (see `./filter.ts`).
 */
export * from './filter.js';
