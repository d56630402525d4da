/**
 * @module core/filter
 * Mem0-style filters over memories: parse, evaluate (see `./filter.ts`).
 */
export {
  type CompareOp,
  type Condition,
  type EntryFilter,
  type FieldRef,
  type FilterRow,
  type TextField,
  type TimeCondition,
  type TimeField,
  FILTER_LIMITS,
  TEXT_FIELDS,
  TIME_FIELDS,
  andFilters,
  asciiLower,
  compareCodePoints,
  matchFilter,
  parseFilter,
  parseInstant,
} from './filter.js';
