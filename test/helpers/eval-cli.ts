/**
 * `memwarden eval …` run in-process on a fresh commander program (`registerEval`), stdout and
 * stderr captured: resolves with both, rejects with the action's error (a MemwardenError
 * keeps its code).
 */
import { Command } from 'commander';
import { vi } from 'vitest';
import { registerEval } from '../../src/cli/eval.js';

export async function runEval(args: readonly string[]): Promise<{ out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const so = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((s) => (out.push(String(s)), true));
  const se = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((s) => (err.push(String(s)), true));
  try {
    const program = new Command().exitOverride();
    registerEval(program);
    await program.parseAsync(['node', 'memwarden', 'eval', ...args]);
  } finally {
    so.mockRestore();
    se.mockRestore();
  }
  return { out: out.join(''), err: err.join('') };
}
