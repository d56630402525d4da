/**
 * Examples are tests (issue 24): every fenced code block in README.md and docs/ is accounted for,
 * and every one that shows an API call runs here as written, so an example cannot rot.
 *
 * The info string after the language says what happens to a block:
 * - `ts`: executed — its `import`s resolved by Node as a reader's project would (`memwarden`,
 *   `memwarden/langgraph`, … are this package, built to dist/ by `npm test`), the imports of the
 *   file's earlier `ts` blocks in scope, as a reader who follows along has them. The data folder
 *   (MEMWARDEN_DATA) is a temporary one and the embedder the deterministic test model
 *   (MEMWARDEN_EMBEDDER), both environment, not code; every `Memory` a block opens is closed.
 * - `sh` in README.md: executed with bash (`set -euo pipefail`) in the repository, same
 *   environment; must exit 0. In docs/, an `sh` block is never executed unmarked: it must say
 *   `run` (then it runs like README's), `mirror=` or `no-run:` — a command of record someone
 *   pasted (absolute paths, `npm ci`) must not run inside the suite.
 * - `sh quickstart`: run by `scripts/quickstart.sh` (in CI: `.ci/run`), which reads it from here.
 * - `… mirror=PATH`: a test or script that runs the same thing one to one; PATH must exist.
 * - `sh no-run:REASON`: not run (a long job, several hosts, an elided value); the reason is
 *   required and listed.
 * - `json`: must parse; `text`: output shown, not code.
 * A block with no language or any other marker fails this test.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly marker: string;
  readonly code: string;
}

function markdownFiles(): string[] {
  const out = [join(REPO, 'README.md')];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(REPO, 'docs'));
  return out;
}

/** Every fenced block (``` only; the docs use no ~~~ fences). */
function fencedBlocks(file: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    const [lang = '', ...rest] = open[1]!.trim().split(/\s+/);
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    blocks.push({ file, line: start + 1, lang, marker: rest.join(' '), code: body.join('\n') });
  }
  return blocks;
}

const blocks = markdownFiles().flatMap((f) =>
  fencedBlocks(relative(REPO, f), readFileSync(f, 'utf8')),
);
const name = (b: Block): string => `${b.file}:${b.line} (${b.lang} ${b.marker})`.trim();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempData = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mw-docs-'));
  dirs.push(d);
  return join(d, 'data');
};

/** The local names a one-line `import { a, b as c } from '…'` declares (a type import: none). */
function importedNames(line: string): string[] {
  const m = /^import\s+(type\s+)?\{([^}]*)\}/.exec(line);
  if (m === null || m[1] !== undefined) return [];
  return m[2]!
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '' && !x.startsWith('type '))
    .map((x) =>
      x
        .split(/\s+as\s+/)
        .at(-1)!
        .trim(),
    );
}

/** Run a `ts` block: imports become dynamic imports, declared Memory objects are closed. */
async function runTs(b: Block, earlierImports: string[]): Promise<void> {
  const own = b.code.split('\n').filter((l) => l.startsWith('import '));
  // A block's own import shadows an earlier block's of the same name (README: `Memory` from
  // 'memwarden', later from 'memwarden/mem0'), as in a reader's new file.
  const ownNames = new Set(own.flatMap(importedNames));
  const kept = earlierImports.flatMap((l) => {
    const names = importedNames(l);
    const left = names.filter((n) => !ownNames.has(n));
    if (left.length === names.length) return [l];
    if (left.length === 0) return [];
    const from = /from\s+(['"][^'"]+['"])/.exec(l)?.[1];
    return from === undefined ? [] : [`import { ${left.join(', ')} } from ${from};`];
  });
  const imports = [...kept, ...own];
  const code = [
    ...new Set(imports),
    ...b.code.split('\n').filter((l) => !l.startsWith('import ')),
  ].join('\n');
  let js = ts.transpileModule(code, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
  js = js.replace(
    /^import \{([^}]*)\} from ['"]([^'"]+)['"];?$/gm,
    (_m, names: string, from: string) =>
      `const {${names}} = await __import(${JSON.stringify(from)});`,
  );
  const declared = [...js.matchAll(/^(?:const|let) (\w+) =/gm)].map((m) => m[1] as string);
  js = `try {\n${js}\n} finally {\n${declared
    .map(
      (d) =>
        `if (typeof ${d} !== 'undefined' && ${d} !== null && typeof ${d}.close === 'function' && ${d}.constructor?.name === 'Memory') await ${d}.close().catch(() => undefined);`,
    )
    .join('\n')}\n}`;
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...a: string[]
  ) => (...v: unknown[]) => Promise<unknown>;
  const saved = { data: process.env.MEMWARDEN_DATA, emb: process.env.MEMWARDEN_EMBEDDER };
  process.env.MEMWARDEN_DATA = tempData();
  process.env.MEMWARDEN_EMBEDDER = 'deterministic';
  try {
    await new AsyncFunction('__import', js)((m: string) => import(m));
  } finally {
    if (saved.data === undefined) delete process.env.MEMWARDEN_DATA;
    else process.env.MEMWARDEN_DATA = saved.data;
    if (saved.emb === undefined) delete process.env.MEMWARDEN_EMBEDDER;
    else process.env.MEMWARDEN_EMBEDDER = saved.emb;
  }
}

function runSh(b: Block): void {
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', b.code], {
    cwd: REPO,
    env: {
      ...process.env,
      MEMWARDEN_DATA: tempData(),
      MEMWARDEN_EMBEDDER: 'deterministic',
      MEMWARDEN_DATABASE_URL: '',
    },
    encoding: 'utf8',
    timeout: 300_000,
  });
  expect(r.status, `${name(b)} exited ${r.status}:\n${r.stdout}\n${r.stderr}`).toBe(0);
}

describe('README and docs code blocks', () => {
  it('finds the blocks, each with a known language and marker', () => {
    expect(blocks.length).toBeGreaterThan(10);
    const bad = blocks.filter((b) => {
      if (b.lang === 'text' || b.lang === 'json') return b.marker !== '';
      if (b.lang !== 'ts' && b.lang !== 'sh') return true;
      return !(
        (b.marker === '' && !(b.lang === 'sh' && b.file !== 'README.md')) ||
        (b.lang === 'sh' && b.marker === 'run') ||
        (b.lang === 'sh' && b.marker === 'quickstart') ||
        /^mirror=\S+$/.test(b.marker) ||
        (b.lang === 'sh' && /^no-run:\S+$/.test(b.marker))
      );
    });
    expect(bad.map(name)).toEqual([]);
  });

  it('mirrors name a file that exists; the quickstart is what scripts/quickstart.sh runs', () => {
    for (const b of blocks.filter((x) => x.marker.startsWith('mirror='))) {
      expect(existsSync(join(REPO, b.marker.slice('mirror='.length))), name(b)).toBe(true);
    }
    const quick = blocks.filter((b) => b.marker === 'quickstart');
    expect(quick.map((b) => b.file)).toEqual(['README.md']);
    expect(readFileSync(join(REPO, 'scripts/quickstart.sh'), 'utf8')).toContain('sh quickstart');
  });

  it('every json block parses', () => {
    for (const b of blocks.filter((x) => x.lang === 'json'))
      expect(() => JSON.parse(b.code), name(b)).not.toThrow();
  });

  const files = [...new Set(blocks.map((b) => b.file))];
  for (const file of files) {
    const mine = blocks.filter((b) => b.file === file);
    const seenImports: string[] = [];
    for (const b of mine) {
      const imports = b.code.split('\n').filter((l) => l.startsWith('import '));
      const before = [...seenImports];
      if (b.lang === 'ts') seenImports.push(...imports);
      if (b.lang === 'ts' && b.marker === '')
        it(`runs ${name(b)}`, () => runTs(b, before), 180_000);
      const shRuns =
        b.lang === 'sh' && (b.marker === 'run' || (b.marker === '' && b.file === 'README.md'));
      if (shRuns) it(`runs ${name(b)}`, () => runSh(b), 300_000);
    }
  }
});
