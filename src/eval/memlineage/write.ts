/**
 * @module eval/memlineage/write
 * Write a run's artifacts to a directory (created if needed).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function writeArtifacts(
  files: ReadonlyMap<string, string>,
  dir: string,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const names = [...files.keys()].sort();
  for (const n of names) await writeFile(join(dir, n), files.get(n) as string, 'utf8');
  return names;
}
