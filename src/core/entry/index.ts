/**
 * @module core/entry
 * The signed records of memwarden: entry, tombstone and registry statement (version 1), their canonical codecs,
 * signing inputs and log leaf data, and UUIDv7 ids.
 */
export type { EntryBody, SignedEntry, TombstoneBody, SignedTombstone } from './types.js';
export { ENTRY_KEYS, LIMITS, RECORD_VERSION, RECORD_VERSION_2, TOMBSTONE_KEYS } from './types.js';
export {
  ENTRY_V2_KEYS,
  ENTRY_V2_SIGNING_DOMAIN,
  V2_FIELDS,
  decodeSignedEntryV2,
} from './entry-v2.js';
export {
  type JsonObject,
  type JsonValue,
  META_LIMITS,
  compareMetaKeys,
  decodeMeta,
  encodeMeta,
  jsonEqual,
} from './meta.js';
export {
  type SignedEncoding,
  encodeEntryBody,
  encodeSignedEntry,
  entrySigningInput,
  signEntry,
  validateEntryBody,
} from './entry.js';
export {
  type EntryForVerify,
  decodeEntryForVerify,
  decodeSignedEntry,
  safeDecodeSignedEntry,
  withEntryLeafData,
  withEntrySigningInput,
} from './entry-decode.js';
export {
  decodeSignedTombstone,
  encodeSignedTombstone,
  encodeTombstoneBody,
  safeDecodeSignedTombstone,
  validateTombstoneBody,
} from './tombstone.js';
export {
  ENTRY_SIGNING_DOMAIN,
  TOMBSTONE_SIGNING_DOMAIN,
  entryLeafData,
  signingInput,
  tombstoneLeafData,
  tombstoneSigningInput,
} from './signing.js';
export {
  isUuidV7Bytes,
  isUuidV7String,
  parseUuid,
  uuidToString,
  uuidv7,
  uuidv7Millis,
} from './uuidv7.js';
export {
  type RegistryBody,
  type RegistryOp,
  type ApiKeyScopeName,
  type SignedRegistryStatement,
  REGISTRY_LEAF_PREFIX,
  REGISTRY_SIGNING_DOMAIN,
  decodeRegistryStatement,
  encodeRegistryBody,
  encodeRegistryStatement,
  isRegistryLeafData,
  registryLeafData,
  registryStatementOfLeaf,
  registrySigningInput,
  safeDecodeRegistryStatement,
} from './registry.js';
