#!/usr/bin/env node
/**
 * @module cli/main
 * `memwarden` — the command line. Every command takes `--data DIR` (default `.memwarden`).
 * Errors print `error CODE: message` on stderr and exit 2 (1 for a failed verification).
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { toBase64 } from '../core/bytes.js';
import { MemwardenError, isMemwardenError } from '../core/errors.js';
import { formatVerifierKey, parseCheckpoint, parseNote } from '../core/merkle/index.js';
import { PrincipalKinds, SourceTiers, type PrincipalKind, type SourceTier } from '../core/trust.js';
import type { LedgerView } from '../memory/log/view.js';
import {
  type RetentionOverrides,
  mergeRetentionOverrides,
  parseRetentionOverrides,
  retentionConfig,
} from '../memory/config.js';
import { type StoreOptions, defaultDataDir, withMemory } from './context.js';
import { entryJson, printJson } from './format.js';
import { serve } from './serve.js';
import { registerAudit } from './audit.js';
import { registerEval } from './eval.js';
import { registerMcp } from './mcp.js';
import { registerScan } from './scan.js';
import { registerEvalSmsr, registerSmsr } from './smsr.js';
import {
  type CheckpointVerifyOptions,
  checkCosigned,
  fetchCheckpointNote,
  readNoteFile,
  registerWitness,
} from './witness.js';

const program = new Command();
program
  .name('memwarden')
  .description(
    'A defended long-term memory layer for LLM agents: signed entries in an RFC 6962 log.',
  )
  .version('0.1.0');

const dataOption = (): Option =>
  new Option('--data <dir>', 'data folder').default(defaultDataDir());
const pgOption = (): Option =>
  new Option('--postgres <url>', 'use a PostgreSQL server instead of the embedded store').env(
    'MEMWARDEN_DATABASE_URL',
  );

/** Every command's store options: `--data DIR` and `--postgres URL`. */
function store(c: Command): Command {
  return c.addOption(dataOption()).addOption(pgOption());
}

/** Open the store's ledger view (verify, prove, keys; no writes), run `fn`, always close. */
async function withLedger<T>(o: StoreOptions, fn: (l: LedgerView) => Promise<T>): Promise<T> {
  return withMemory(o, (m) => fn(m.ledger));
}

function parseTier(t: string): SourceTier {
  if (!(SourceTiers as readonly string[]).includes(t)) {
    throw new MemwardenError('INPUT_INVALID', `tier must be one of ${SourceTiers.join(', ')}`);
  }
  return t as SourceTier;
}

program
  .command('init')
  .description('create the data folder, its key file and an empty log')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (o: StoreOptions) => {
    await withLedger(o, async (l) => {
      printJson({
        data: o.data,
        logSize: l.size,
        checkpointKey: formatVerifierKey(l.origin, l.checkpointPublicKey),
      });
    });
  });

const principals = program
  .command('principals')
  .description('register, list and rotate principals');
principals
  .command('add <name>')
  .description('register a principal (Ed25519 key held by the host) and issue its API key')
  .addOption(
    new Option('--kind <kind>', 'principal kind').choices([...PrincipalKinds]).default('user'),
  )
  .addOption(dataOption())
  .addOption(pgOption())
  .option('--json', 'print JSON (default)')
  .action(async (name: string, o: StoreOptions & { kind: PrincipalKind }) => {
    await withMemory(o, async (m) => {
      const p = await m.createPrincipal(o.kind, name);
      printJson({ id: p.id, apiKey: p.apiKey, kind: o.kind, name, kid: p.kid });
    });
  });
principals
  .command('list')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (o: StoreOptions) => {
    await withLedger(o, async (l) => {
      // Kinds and keys as the signed registry in the log states them (ADR 0033); the name is
      // the table's (an untrusted label).
      const ps = await l.listPrincipals();
      const out = [];
      for (const p of ps) {
        const keys = await l.keysOf(p.id);
        out.push({
          id: p.id,
          kind: p.kind,
          name: p.name,
          keys: keys.map((k) => ({
            kid: k.kid,
            validFromNs: k.validFromNs,
            ...(k.validUntilNs === undefined ? {} : { validUntilNs: k.validUntilNs }),
            ...(k.revokedAtNs === undefined
              ? {}
              : { revokedAtNs: k.revokedAtNs, reason: k.revocationReason }),
          })),
        });
      }
      printJson(out);
    });
  });
principals
  .command('rotate <id>')
  .description('rotate a principal key: the current key signs its successor')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (id: string, o: StoreOptions) => {
    await withLedger(o, async (l) => printJson({ id, kid: await l.rotatePrincipalKey(id) }));
  });

program
  .command('revoke <kid>')
  .description('revoke a key: nothing appended after now verifies under it')
  .requiredOption('--reason <text>', 'why')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (kid: string, o: StoreOptions & { reason: string }) => {
    await withLedger(o, async (l) => {
      // The revocation is a signed statement in the log: nothing at or past its leaf verifies
      // under the key; writes queued under it that commit later are re-signed or refused.
      const at = await l.revokeKey(kid, o.reason);
      printJson({ kid, revoked: true, atLogSize: at });
    });
  });

program
  .command('write <content>')
  .description('sign an entry as a principal, append it to the log and store it')
  .requiredOption('--as <principal>', 'writer principal id')
  .addOption(
    new Option('--tier <tier>', 'source tier').choices([...SourceTiers]).default('USER_OBSERVED'),
  )
  .option('--kind <kind>', 'entry kind', 'note')
  .option('--source <uri>', 'source URI')
  .option('--parent <id...>', 'parent entry ids (weight 1 each unless --weight)')
  .option(
    '--weight <w...>',
    'one weight in [0, 1] per --parent (never below the attribution algorithm)',
  )
  .option('--thread <id>', 'conversation thread (its last retrieval is auto-attributed)')
  .option('--ttl-ms <ms>', 'lifetime in ms, or none (never expires, within the tier ceiling)')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(
    async (
      content: string,
      o: {
        as: string;
        tier: string;
        kind: string;
        source?: string;
        parent?: string[];
        weight?: string[];
        thread?: string;
        ttlMs?: string;
      } & StoreOptions,
    ) => {
      await withMemory(o, async (m) => {
        // The whole write path: limits, tier bound, TTL ceiling, lineage, screening (held for
        // review), near-duplicates, quota, embedding, signature, log append.
        const r = await m.add(content, {
          principal: o.as,
          tier: parseTier(o.tier),
          kind: o.kind,
          ...(o.source === undefined ? {} : { source: o.source }),
          ...(o.thread === undefined ? {} : { threadId: o.thread }),
          ...(o.ttlMs === undefined
            ? {}
            : { ttlMs: /^(none|null)$/i.test(o.ttlMs) ? null : Number(o.ttlMs) }),
          ...(o.parent === undefined
            ? {}
            : {
                parents: o.parent,
                weights: o.weight === undefined ? o.parent.map(() => 1) : o.weight.map(Number),
              }),
        });
        if (r.status === 'stored') {
          const v = await m.ledger.verifyEntry(r.memory.id);
          if (v.ok)
            printJson({
              ...entryJson(v.entry, v.leafIndex),
              ...(r.memory.expiresAt === undefined ? {} : { expiresAt: r.memory.expiresAt }),
              ...(r.lineage === undefined ? {} : { lineage: r.lineage }),
            });
        } else printJson(r);
      });
    },
  );

program
  .command('verify <id>')
  .description(
    'verify an entry: strict decode, MAC, signature and log inclusion (exit 1 if it fails)',
  )
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (id: string, o: StoreOptions) => {
    await withLedger(o, async (l) => {
      const v = await l.verifyEntry(id);
      if (v.ok) printJson({ ok: true, ...entryJson(v.entry, v.leafIndex) });
      else {
        printJson(v);
        process.exitCode = 1;
      }
    });
  });

program
  .command('delete <id>')
  .description('append a signed tombstone for an entry (its leaf stays provable)')
  .requiredOption('--as <principal>', 'deleting principal id')
  .requiredOption('--reason <text>', 'why')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (id: string, o: StoreOptions & { as: string; reason: string }) => {
    // Through the Memory API like every write: the write path's bounds and the owner check,
    // exactly as over HTTP (an OPERATOR row is nobody's to delete from an app principal).
    await withMemory(o, async (m) => {
      await m.delete(id, { principal: o.as, reason: o.reason });
      printJson({ target: id, deleted: true });
    });
  });

program
  .command('purge')
  .description(
    "tombstone every entry from a source URI or with a content hash: the principal's own, or " +
      "with --all-principals every principal's (operator only, audited) — the recovery step " +
      'after a poisoned source',
  )
  .requiredOption('--as <principal>', 'the purging principal id')
  .option('--source <uri>', 'exact source URI')
  .option('--content-hash <hex>', 'SHA-256 (hex) of the content')
  .option('--all-principals', "purge every principal's matching entries (operator only)")
  .option('--reason <text>', 'why (kept in each tombstone)')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(
    async (
      o: StoreOptions & {
        as: string;
        source?: string;
        contentHash?: string;
        allPrincipals?: boolean;
        reason?: string;
      },
    ) => {
      await withMemory(o, async (m) => {
        const r = await m.purgeDetailed({
          principal: o.as,
          ...(o.source === undefined ? {} : { source: o.source }),
          ...(o.contentHash === undefined ? {} : { contentHash: o.contentHash }),
          ...(o.allPrincipals === true ? { allPrincipals: true } : {}),
          ...(o.reason === undefined ? {} : { reason: o.reason }),
        });
        printJson(r);
      });
    },
  );

program
  .command('checkpoint')
  .description(
    'sign a checkpoint of the current log (C2SP tlog-checkpoint signed note), or check one ' +
      '(--from a server / --note a file) against the log key and N witness cosignatures',
  )
  .addOption(dataOption())
  .addOption(pgOption())
  .option('--json', 'print { origin, size, root, note } instead of the note')
  .option('--from <url>', 'fetch the served (cosigned) checkpoint of a memwarden server')
  .addOption(new Option('--api-key <key>', 'API key for --from').env('MEMWARDEN_API_KEY'))
  .option('--note <file>', "check a saved checkpoint note ('-' reads stdin)")
  .option('--log-key <vkey>', "the log's vkey (required with --from / --note)")
  .option(
    '--witness-key <vkey>',
    'a trusted witness vkey (repeatable)',
    (v: string, p?: string[]) => [...(p ?? []), v],
  )
  .option(
    '--min-cosignatures <n>',
    'distinct trusted witnesses that must have cosigned (default 1 with --witness-key)',
  )
  .action(async (o: StoreOptions & CheckpointVerifyOptions & { json?: boolean }) => {
    const remote = o.from !== undefined || o.note !== undefined;
    if (o.from !== undefined && o.note !== undefined)
      throw new MemwardenError('INPUT_INVALID', 'give --from or --note, not both');
    const checking = remote || o.witnessKey !== undefined || o.minCosignatures !== undefined;
    let note: string;
    let logKey: string;
    if (remote) {
      if (o.logKey === undefined)
        throw new MemwardenError('INPUT_INVALID', '--from / --note need --log-key');
      logKey = o.logKey;
      note =
        o.from !== undefined
          ? await fetchCheckpointNote(o.from, o.apiKey)
          : readNoteFile(o.note as string);
    } else {
      [note, logKey] = await withLedger(o, async (l) => [
        (await l.checkpoint()).note,
        o.logKey ?? formatVerifierKey(l.origin, l.checkpointPublicKey),
      ]);
    }
    if (!checking) {
      const cp = parseCheckpoint(parseNote(note).text);
      if (o.json === true)
        printJson({ origin: cp.origin, size: cp.size, root: toBase64(cp.root), note });
      else process.stdout.write(note);
      return;
    }
    let r;
    try {
      r = checkCosigned(note, logKey, o);
    } catch (e) {
      // A checkpoint that fails the policy is a failed verification (exit 1), not a usage error.
      if (isMemwardenError(e) && e.code !== 'INPUT_INVALID' && e.code !== 'KEY_INVALID') {
        process.stderr.write(`error ${e.code}: ${e.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw e;
    }
    if (o.json === true)
      printJson({
        origin: r.checkpoint.origin,
        size: r.checkpoint.size,
        root: toBase64(r.checkpoint.root),
        cosignatures: r.cosignatures,
        note,
      });
    else process.stdout.write(note);
  });

program
  .command('prove <id>')
  .description('inclusion proof of an entry against the latest checkpoint')
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (id: string, o: StoreOptions) => {
    await withLedger(o, async (l) => {
      const p = await l.proveEntry(id);
      printJson({
        leafIndex: p.leafIndex,
        treeSize: p.treeSize,
        leafHash: toBase64(p.leafHash),
        hashes: p.hashes.map(toBase64),
        checkpoint: {
          origin: l.origin,
          size: p.checkpoint.size,
          root: toBase64(p.checkpoint.root),
          note: p.checkpoint.note,
        },
      });
    });
  });

program
  .command('vkey')
  .description("print the log's checkpoint verifier key (signed-note vkey)")
  .addOption(dataOption())
  .addOption(pgOption())
  .action(async (o: StoreOptions) => {
    await withLedger(o, async (l) => {
      process.stdout.write(formatVerifierKey(l.origin, l.checkpointPublicKey) + '\n');
    });
  });

registerAudit(program);

type ServeFlags = {
  port: string;
  host: string;
  witness?: string[];
  acceptClientEmbeddings?: boolean;
  reports: string;
  config?: string;
  quota?: string[];
  ttl?: string[];
  ttlCeiling?: string[];
};

const collect = (v: string, p?: string[]): string[] => [...(p ?? []), v];

/**
 * `TIER=N` settings of one flag (`--quota USER_OBSERVED=50`); `none` / `unlimited` / `null`
 * is null (no quota, never expires, no ceiling).
 */
function tierSettings(
  flag: string,
  values: readonly string[] | undefined,
): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const v of values ?? []) {
    const m = /^([A-Z_]+)=(.+)$/.exec(v);
    if (m === null)
      throw new MemwardenError('INPUT_INVALID', `${flag} takes TIER=N, got ${JSON.stringify(v)}`);
    const [, tier, raw] = m as unknown as [string, string, string];
    out[tier] = /^(none|unlimited|null)$/i.test(raw) ? null : Number(raw);
  }
  return out;
}

/** The retention settings of `serve`: the config file's `retention`, then the flags over it. */
function retentionFrom(o: ServeFlags): RetentionOverrides | undefined {
  let file: RetentionOverrides | undefined;
  if (o.config !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(o.config, 'utf8'));
    } catch (e) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `--config ${o.config}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new MemwardenError('INPUT_INVALID', `--config ${o.config}: not a JSON object`);
    const keys = Object.keys(doc);
    if (keys.some((k) => k !== 'retention'))
      throw new MemwardenError(
        'INPUT_INVALID',
        `--config ${o.config}: only "retention" is recognised`,
      );
    file = parseRetentionOverrides((doc as { retention?: unknown }).retention ?? {});
  }
  const flags = parseRetentionOverrides({
    ...(o.quota === undefined ? {} : { quotaPerDay: tierSettings('--quota', o.quota) }),
    ...(o.ttl === undefined ? {} : { ttlMs: tierSettings('--ttl', o.ttl) }),
    ...(o.ttlCeiling === undefined
      ? {}
      : { ttlCeilingMs: tierSettings('--ttl-ceiling', o.ttlCeiling) }),
  });
  const merged = mergeRetentionOverrides(file, flags);
  retentionConfig(merged); // the whole, checked at start-up
  return Object.keys(merged).length === 0 ? undefined : merged;
}
store(
  program
    .command('serve')
    .description('serve the HTTP API, OpenAPI document, Prometheus metrics and the review console')
    .option('--port <n>', 'port (0 picks a free one)', '7411')
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .option(
      '--witness <url=vkey>',
      'push each new checkpoint to this C2SP witness and serve its cosignature (repeatable)',
      (v: string, p?: string[]) => [...(p ?? []), v],
    )
    .option(
      '--accept-client-embeddings',
      'accept a precomputed "embedding" on add and search (callers steer ranking of their own memories)',
    )
    .option(
      '--reports <dir>',
      'evaluation reports the console lists (<dir>/<name>/report.html)',
      'eval-out',
    )
    .option(
      '--no-read-model',
      'answer vector search from the database instead of the in-process read model (which, on a PostgreSQL server, follows the log)',
    )
    .addOption(
      new Option(
        '--vector-index <kind>',
        'PostgreSQL with pgvector: the ANN index SQL vector search uses from 10,000 rows (every process of a database must agree)',
      ).choices(['ivfflat', 'hnsw']),
    )
    .option(
      '--no-pglite-worker',
      'embedded store: run PGlite on the HTTP thread instead of its own worker thread (ADR 0028)',
    )
    .option('--pglite-worker', 'embedded store: run PGlite in its own worker thread (the default)')
    .option(
      '--config <file>',
      'JSON file { "retention": { "quotaPerDay": {TIER: n|null}, "ttlMs": {…}, "ttlCeilingMs": {…}, "limits": {…}, … } }',
    )
    .option(
      '--quota <tier=n>',
      'writes per principal per UTC day for a tier, or none (repeatable)',
      collect,
    )
    .option('--ttl <tier=ms>', 'default lifetime of a tier in ms, or none (repeatable)', collect)
    .option(
      '--ttl-ceiling <tier=ms>',
      'longest lifetime a write of a tier may ask for, in ms, or none: allows never-expiring (repeatable)',
      collect,
    ),
).action(async (o: StoreOptions & ServeFlags) => {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MemwardenError('INPUT_INVALID', '--port must be an integer in 0..65535');
  }
  const retention = retentionFrom(o);
  await serve({ ...o, port, ...(retention === undefined ? {} : { retention }) });
});

registerSmsr(program);
registerWitness(program);
registerScan(program);
registerMcp(program);
registerEvalSmsr(registerEval(program));

program.parseAsync(process.argv).catch((e: unknown) => {
  if (isMemwardenError(e)) {
    process.stderr.write(`error ${e.code}: ${e.message}\n`);
  } else {
    process.stderr.write(`error INTERNAL: ${e instanceof Error ? e.message : String(e)}\n`);
  }
  process.exitCode = 2;
});
