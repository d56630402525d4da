/**
 * @module cli/mcp
 * `memwarden mcp --data DIR [--principal ID] [--http --port N]`: serve MCP on the store.
 *
 * stdio (default) maps to one principal: `--principal ID`, MEMWARDEN_PRINCIPAL, the store's
 * only user/agent principal, or a new agent principal `mcp` (its id printed to stderr).
 * `--http` serves Streamable HTTP at /mcp, each request authenticated by its bearer API key.
 * The embedded store (PGlite) is locked to one process: a second `memwarden mcp` on the same
 * folder fails with `error STORAGE_FAILED`. Several processes share one store through
 * `--postgres URL`.
 */
import { type Command, Option } from 'commander';
import { MemwardenError } from '../core/errors.js';
import { McpBackend, resolveStdioPrincipal, serveHttp, serveStdio } from '../mcp/index.js';
import { type StoreOptions, defaultDataDir, openMemory } from './context.js';

interface McpOptions extends StoreOptions {
  readonly principal?: string;
  readonly http?: boolean;
  readonly port: string;
  readonly host: string;
}

/** stdout belongs to the protocol: anything logged through `console` goes to stderr. */
function consoleToStderr(): void {
  const err = (...a: unknown[]): void => {
    process.stderr.write(
      a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ') + '\n',
    );
  };
  console.log = err;
  console.info = err;
  console.debug = err;
  console.warn = err;
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve MCP (stdio by default, Streamable HTTP with --http) on the store')
    .addOption(new Option('--data <dir>', 'data folder').default(defaultDataDir()))
    .addOption(
      new Option(
        '--postgres <url>',
        'use a PostgreSQL server (several processes on one store)',
      ).env('MEMWARDEN_DATABASE_URL'),
    )
    .addOption(
      new Option('--principal <id>', 'stdio: the principal every call acts as').env(
        'MEMWARDEN_PRINCIPAL',
      ),
    )
    .option('--http', 'serve Streamable HTTP (bearer API keys) instead of stdio')
    .option('--port <n>', 'HTTP port (0 picks a free one)', '7412')
    .option('--host <addr>', 'HTTP address to bind', '127.0.0.1')
    .action(async (o: McpOptions) => {
      consoleToStderr();
      const port = Number(o.port);
      if (o.http === true && (!Number.isInteger(port) || port < 0 || port > 65535))
        throw new MemwardenError('INPUT_INVALID', '--port must be an integer in 0..65535');
      const memory = await openMemory(o);
      let closing: Promise<void> | undefined;
      const shutdown = (): Promise<void> => (closing ??= memory.close());
      try {
        const backend = await McpBackend.open(memory);
        if (o.http === true) {
          const { server, url } = await serveHttp(backend, { port, host: o.host });
          process.stderr.write(`memwarden mcp: Streamable HTTP on ${url}\n`);
          const stop = (): void => {
            server.close();
            void shutdown().finally(() => process.exit(0));
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
          return;
        }
        const principal = await resolveStdioPrincipal(memory, o.principal, (id) =>
          process.stderr.write(
            `memwarden mcp: created agent principal ${id} (pass --principal ${id})\n`,
          ),
        );
        const stop = (): void => void shutdown().finally(() => process.exit(0));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        process.stderr.write(`memwarden mcp: stdio as principal ${principal}\n`);
        await serveStdio(backend, principal);
        await shutdown();
      } catch (e) {
        await shutdown();
        throw e;
      }
    });
}
