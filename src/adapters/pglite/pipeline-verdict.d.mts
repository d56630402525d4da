/** See `./pipeline-verdict.mjs`. */
export declare function pipelineVerdict(
  raw: Uint8Array,
  statements: number,
  expect: readonly { readonly statement: number; readonly rows: number }[],
): boolean;
