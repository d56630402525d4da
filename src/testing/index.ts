/**
 * @module memwarden/testing
 * Test doubles and the storage conformance suite, for people writing their own backends.
 */
export { ManualClock, MemoryKeySource, SeededRandom } from './doubles.js';
export {
  storageConformanceCases,
  type BackendFactory,
  type ConformanceCase,
} from './storage-conformance.js';
