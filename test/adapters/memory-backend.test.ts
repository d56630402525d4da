import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { storageConformanceCases } from '../../src/testing/storage-conformance.js';

describe('in-memory backend conformance', () => {
  for (const c of storageConformanceCases) {
    it(c.name, () => c.run({ open: () => MemoryBackend.open() }));
  }
});

describe('journalled in-memory backend conformance', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  for (const c of storageConformanceCases) {
    it(c.name, () => {
      const dir = mkdtempSync(join(tmpdir(), 'mw-journal-'));
      dirs.push(dir);
      const journalPath = join(dir, 'journal.jsonl');
      return c.run({
        open: () => MemoryBackend.open({ journalPath }),
        reopen: () => MemoryBackend.open({ journalPath }),
      });
    });
  }
});
