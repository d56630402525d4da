/** See `./raw-chunks.mjs`. */
export declare class RawChunks {
  /** `onRawData`'s callback: copies the chunk. */
  readonly add: (chunk: Uint8Array) => void;
  /** The whole response. */
  joined(): Uint8Array;
}
