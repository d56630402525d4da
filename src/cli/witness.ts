/**
 * @module cli/witness
 * `memwarden witness` (run a C2SP tlog-witness), `memwarden witness vkey`, and the client
 * side of witnessing: verifying a checkpoint against N witness cosignatures
 * (`memwarden checkpoint --witness-key VKEY --min-cosignatures N`).
 */
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { fromBase64 } from '../core/bytes.js';
import { MemwardenError } from '../core/errors.js';
import { type CosignedCheckpoint, verifyCosignedCheckpoint } from '../core/merkle/index.js';
import { createLogger } from '../server/logger.js';
import type { CheckpointHook } from '../server/routes.js';
import type { MemoryApi } from '../memory/api.js';
import {
  WitnessPublisher,
  loadIdentity,
  parseWitnessSpec,
  startWitness,
} from '../witness/index.js';

/** Default witness folder (never the log's: they are different parties). */
export function defaultWitnessDir(): string {
  return process.env.MEMWARDEN_WITNESS_DATA ?? '.memwarden-witness';
}

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

function parsePort(p: string): number {
  const port = Number(p);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new MemwardenError('INPUT_INVALID', '--port must be an integer in 0..65535');
  return port;
}

/** Register `witness` and `witness vkey`. */
export function registerWitness(program: Command): void {
  const dataOption = (): Option =>
    new Option('--data <dir>', 'witness folder (key, name, per-log state)').default(
      defaultWitnessDir(),
    );
  const w = program
    .command('witness')
    .description('run a C2SP tlog-witness: verify consistency, then cosign checkpoints')
    .addOption(dataOption())
    .option('--log-vkey <vkey>', 'a log checkpoint vkey to witness (repeatable)', collect)
    .option('--name <name>', 'witness name on first run, e.g. witness.example.org/w1')
    .option('--port <n>', 'port (0 picks a free one)', '7412')
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .action(
      async (o: {
        data: string;
        logVkey?: string[];
        name?: string;
        port: string;
        host: string;
      }) => {
        const logger = createLogger();
        const running = await startWitness({
          dir: o.data,
          logVkeys: o.logVkey ?? [],
          port: parsePort(o.port),
          host: o.host,
          ...(o.name === undefined ? {} : { name: o.name }),
          logger,
        });
        process.stdout.write(`memwarden witness listening on ${running.url}\n`);
        process.stdout.write(`vkey ${running.identity.vkey}\n`);
        let stopping = false;
        const stop = async (): Promise<void> => {
          if (stopping) return;
          stopping = true;
          await running.close().catch(() => undefined);
          process.exit(0);
        };
        process.once('SIGINT', () => void stop());
        process.once('SIGTERM', () => void stop());
      },
    );
  // `--data` / `--name` are the parent's options (commander parses them there wherever they
  // appear), so the subcommand reads them from it.
  w.command('vkey')
    .description("print the witness's cosigner vkey (creating its key on first use)")
    .action(async (_: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ data: string; name?: string }>();
      const id = await loadIdentity(o.data, o.name);
      process.stdout.write(`${id.vkey}\n`);
    });
}

/** `--witness URL=VKEY` (repeatable) on `serve`: the hook that cosigns served checkpoints. */
export function witnessHook(
  specs: readonly string[],
  memory: Pick<MemoryApi, 'consistency'>,
  onError: (witness: string, e: MemwardenError) => void,
): CheckpointHook | undefined {
  if (specs.length === 0) return undefined;
  const publisher = new WitnessPublisher({
    witnesses: specs.map(parseWitnessSpec),
    consistency: async (from, to) => (await memory.consistency(from, to)).hashes.map(fromBase64),
    onError,
  });
  return async (cp) => ({ ...cp, note: await publisher.cosign({ size: cp.size, note: cp.note }) });
}

/** Options of `checkpoint` for client-side verification. */
export interface CheckpointVerifyOptions {
  readonly from?: string;
  readonly apiKey?: string;
  readonly note?: string;
  readonly logKey?: string;
  readonly witnessKey?: string[];
  readonly minCosignatures?: string;
}

/** Fetch a served checkpoint note (`GET /v1/log/checkpoint`). */
export async function fetchCheckpointNote(
  url: string,
  apiKey: string | undefined,
): Promise<string> {
  if (apiKey === undefined)
    throw new MemwardenError('AUTH_REQUIRED', '--from needs --api-key (or MEMWARDEN_API_KEY)');
  let res: Response;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}/v1/log/checkpoint`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', `cannot reach ${url}`, { cause: e });
  }
  const body = (await res.json().catch(() => undefined)) as { note?: unknown } | undefined;
  if (!res.ok || typeof body?.note !== 'string')
    throw new MemwardenError('INPUT_INVALID', `server answered ${res.status}`);
  return body.note;
}

/** Read `--note FILE` ('-' is stdin). */
export function readNoteFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new MemwardenError('INPUT_INVALID', `cannot read ${file}`, { cause: e });
  }
}

/** Apply the client policy; throws the coded verification error. */
export function checkCosigned(
  note: string,
  logKey: string,
  o: CheckpointVerifyOptions,
): CosignedCheckpoint {
  const witnesses = o.witnessKey ?? [];
  const min =
    o.minCosignatures === undefined ? Math.min(1, witnesses.length) : Number(o.minCosignatures);
  if (!Number.isSafeInteger(min) || min < 0)
    throw new MemwardenError('INPUT_INVALID', '--min-cosignatures must be a non-negative integer');
  return verifyCosignedCheckpoint(note, {
    logKey,
    witnesses,
    minCosignatures: min,
    now: Math.floor(Date.now() / 1000),
  });
}
