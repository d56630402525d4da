/**
 * `memwarden eval memlineage` as registered by `registerEval`, run in-process on a fresh
 * commander program: writes the artifacts, prints the summary with --json.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runEval } from '../helpers/eval-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-eval-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('registerEval', () => {
  it('writes CSVs, summary.json and a self-contained report.html', async () => {
    const { out, err } = await runEval(['memlineage', '--out', dir, '--json']);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'asr_matrix.csv',
        'r_k_ablation.csv',
        'utility_baseline.csv',
        'summary.json',
        'report.html',
      ]),
    );
    expect(readFileSync(join(dir, 'r_k_ablation.csv'), 'utf8').split('\n')[0]).toBe(
      'algorithm,judge_init,judge_decay,tau,K,propagated',
    );
    expect(readFileSync(join(dir, 'utility_baseline.csv'), 'utf8').split('\n')[0]).toBe(
      'defense,workflow,dispatch_rate',
    );
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/(src|href)=["']https?:/);
    const summary = JSON.parse(out) as { checks: Record<string, boolean> };
    expect(Object.values(summary.checks).every(Boolean)).toBe(true);
    expect(err).toContain('[memlineage]');
  }, 300_000); // the harness includes the adaptive suite (issue 18): ~40 s on a busy 2-core machine
});
