/**
 * @module witness
 * A C2SP tlog-witness (`memwarden witness`) and the log side that pushes checkpoints to
 * witnesses (`memwarden serve --witness URL=VKEY`). An edge: it picks adapters and runs HTTP.
 */
export { createWitnessApp, type WitnessAppOptions, type WitnessLogger } from './app.js';
export {
  WitnessPublisher,
  parseWitnessSpec,
  type PublishedCheckpoint,
  type WitnessEndpoint,
  type WitnessPublisherOptions,
} from './client.js';
export { WitnessStore, loadIdentity, type StoredLogState, type WitnessIdentity } from './store.js';
export { startWitness, witnessedLogs, type RunningWitness } from './serve.js';
