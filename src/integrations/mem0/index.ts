/**
 * @module integrations/mem0
 * memwarden behind the class surface of Mem0's open-source `Memory` (`memwarden/mem0`): a Mem0
 * user changes one import.
 *
 *     import { Memory } from 'memwarden/mem0';
 *     const memory = new Memory();
 *     await memory.add('I prefer window seats', { userId: 'alice' });
 */
export {
  Memory,
  Mem0ScopeError,
  type Mem0AddOptions,
  type Mem0Config,
  type Mem0Entity,
  type Mem0Filters,
  type Mem0GetAllOptions,
  type Mem0HistoryEntry,
  type Mem0MemoryItem,
  type Mem0Message,
  type Mem0PrincipalResolver,
  type Mem0SearchOptions,
  type Mem0SearchResult,
  type MemwardenMemory,
} from './memory.js';
