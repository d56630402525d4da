/**
 * @module core/graph
 * Pure graph algorithms for graph memory and AuthSelect: the provenance-carrying graph index and
 * its full / authenticated views, Personalized PageRank (damping pinned by AuthSelect App. C),
 * community selection, graph-distance rerank, reciprocal-rank fusion, and the AuthSelect replay.
 */
export {
  type Csr,
  type EdgeInput,
  type EdgeRecord,
  type NodeKind,
  GraphIndex,
  buildCsr,
  isAuthenticated,
} from './structure.js';
export {
  PPR_DAMPING,
  type PprOptions,
  type PprResult,
  type Seed,
  personalizedPageRank,
  resetVector,
  topK,
} from './ppr.js';
export {
  type AuthSelectResult,
  type PprQuery,
  type PprSelection,
  type ReplayMode,
  type Selection,
  authSelect,
  authSelectPpr,
  authSelectPprPower,
  divergenceAuthority,
  pprSelect,
  pprSelectPower,
  sameOrder,
  sameSet,
} from './authselect.js';
export { type PushTuning } from './push.js';
export {
  type CommunityOptions,
  type CommunitySelection,
  communitySelect,
  louvainPartition,
  mulberry32,
} from './community.js';
export { type PoolItem, hopDistances, nodeDistanceRerank, reciprocalRankFusion } from './rerank.js';
