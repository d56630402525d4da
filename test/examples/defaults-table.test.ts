/**
 * The README's table of defaults (issue 24: memories expired after 30 days or 1 hour and no one
 * was told) is generated from the code: this test fails when README.md's table differs from
 * what scripts/defaults-table.mjs derives from the built modules and `serve --help` now.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');

describe('README defaults table', () => {
  it('is exactly what the code says', async () => {
    const gen = (await import(join(REPO, 'scripts/defaults-table.mjs'))) as {
      defaultsTable(): Promise<string>;
      withTable(readme: string, table: string): string;
    };
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const table = await gen.defaultsTable();
    expect(table).toContain('USER_OBSERVED memory lifetime | 30 days');
    expect(table).toContain('EXTERNAL_WEB memory lifetime | 1 hour');
    expect(gen.withTable(readme, table), 'run: npm run build && node scripts/defaults-table.mjs --write').toBe(readme);
  }, 60_000);
});
