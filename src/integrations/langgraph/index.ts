/**
 * @module integrations/langgraph
 * memwarden as a LangGraph.js store (`memwarden/langgraph`):
 *
 *     const store = new MemwardenStore({ memory, principal });
 *     const graph = builder.compile({ store });
 */
export {
  LangGraphPrincipalError,
  MemwardenStore,
  PutHeldForReviewError,
  type LangGraphEmbedFunction,
  type LangGraphEmbeddings,
  type PrincipalResolver,
  type MemwardenPutOperation,
  type MemwardenPutOptions,
  type MemwardenStoreOptions,
  type MemwardenStoreTtlConfig,
} from './store.js';
export { MemwardenPlatformStore, type MemwardenPlatformStoreOptions } from './platform.js';
export { LANGGRAPH_KIND, addressUri, parseAddressUri } from './address.js';
