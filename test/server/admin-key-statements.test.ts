/**
 * Issue 24 (left open by stop 25): API key changes — create, issue, rotate, revoke, for
 * principal and platform keys alike — are signed registry statements in the log (ADR 0033,
 * ADR 0070), like the signing keys' changes, so the key history is auditable and a key table
 * edited at rest is detected and decides nothing. Before this change they were audit rows and
 * `api_keys` alone decided authentication: a row inserted at rest was a working key, a
 * revocation undone at rest re-opened a key, and `memwarden audit` saw neither.
 *
 * Each case edits the store at rest (PGlite's superuser / the server's table owner), then a
 * freshly opened Memory (a restarted process) authenticates and audits.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { registryStatementOfLeaf } from '../../src/core/entry/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { auditStore } from '../../src/memory/log/store-audit.js';
import { Memory } from '../../src/memory/memory.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { keepLedger, ledgerOf } from '../helpers/ledger-of.js';
import { type RawStore, rawStores } from '../helpers/raw-store.js';

async function memoryOn(
  storage: RootStorage,
  keys: MemoryKeySource,
  anchor: MemoryKeySource,
): Promise<Memory> {
  const ledger = await Ledger.open({
    storage,
    keys,
    anchor,
    clock: systemClock,
    random: systemRandom,
  });
  return keepLedger(
    new Memory({
      ledger,
      storage,
      embedder: new DeterministicEmbedder(),
      clock: systemClock,
      random: systemRandom,
    }),
    ledger,
  );
}

const keyIdOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** The API-key statements in the log, in order. */
async function apiKeyStatements(mem: Memory) {
  const s = ledgerOf(mem).storage;
  const leaves = await s.getLeaves(0, await s.logSize());
  return leaves
    .filter((l) => l.kind === 'registry')
    .map((l) => registryStatementOfLeaf(l.data))
    .filter((st) => st.op === 'apikey' || st.op === 'apikey-revoke')
    .map((st) => ({
      op: st.op,
      principal: st.principal,
      keyId: Buffer.from(st.key as Uint8Array).toString('hex'),
      ...(st.by === undefined ? {} : { by: st.by }),
      ...(st.scope === undefined ? {} : { scope: st.scope }),
    }));
}

async function world(make: () => Promise<RawStore>) {
  const raw = await make();
  const keys = new MemoryKeySource();
  const anchor = new MemoryKeySource();
  const fresh = async (): Promise<Memory> => memoryOn(await raw.open(), keys, anchor);
  const mem = await fresh();
  const boot = await mem.bootstrapOperator();
  if (boot === undefined) throw new Error('no operator bootstrapped');
  const ops = boot.id;
  const alice = await mem.adminCreatePrincipal({ by: ops, kind: 'user', name: 'alice' });
  const platform = await mem.adminCreatePrincipal({
    by: ops,
    kind: 'agent',
    name: 'acme-platform',
    scope: 'platform',
  });
  return { raw, fresh, mem, ops, opsKey: boot.apiKey, alice, platform };
}

const findingsOn = async (mem: Memory, subject: string): Promise<string[]> =>
  (await auditStore(ledgerOf(mem))).findings
    .filter((f) => f.subject === subject)
    .map((f) => f.code);

describe.each(rawStores('apikeys'))(
  'API key changes are signed statements on $name',
  ({ make }) => {
    it(
      'create, issue, rotate and revoke each append a signed statement; the key list is read from them',
      { timeout: 300_000 },
      async () => {
        const w = await world(make);
        try {
          const extra = await w.mem.adminIssueKey({ by: w.ops, principal: w.alice.id });
          const rotated = await w.mem.adminRotateKey({ by: w.ops, keyId: w.alice.key.keyId });
          await w.mem.adminRevokeKey({ by: w.ops, keyId: extra.keyId, reason: 'left the team' });
          const sts = await apiKeyStatements(w.mem);
          expect(sts).toEqual([
            {
              op: 'apikey',
              principal: w.ops,
              keyId: keyIdOf(w.opsKey),
              by: w.ops,
              scope: 'principal',
            },
            {
              op: 'apikey',
              principal: w.alice.id,
              keyId: w.alice.key.keyId,
              by: w.ops,
              scope: 'principal',
            },
            {
              op: 'apikey',
              principal: w.platform.id,
              keyId: w.platform.key.keyId,
              by: w.ops,
              scope: 'platform',
            },
            {
              op: 'apikey',
              principal: w.alice.id,
              keyId: extra.keyId,
              by: w.ops,
              scope: 'principal',
            },
            {
              op: 'apikey',
              principal: w.alice.id,
              keyId: rotated.keyId,
              by: w.ops,
              scope: 'principal',
            },
            { op: 'apikey-revoke', principal: w.alice.id, keyId: w.alice.key.keyId, by: w.ops },
            { op: 'apikey-revoke', principal: w.alice.id, keyId: extra.keyId, by: w.ops },
          ]);
          // A restarted process reads the same history.
          const mem = await w.fresh();
          const listed = await mem.adminListKeys({ by: w.ops, principal: w.alice.id });
          expect(listed.map((k) => [k.keyId, k.revoked])).toEqual([
            [w.alice.key.keyId, true],
            [extra.keyId, true],
            [rotated.keyId, false],
          ]);
          expect(await mem.authenticate(rotated.apiKey)).toBe(w.alice.id);
          expect(await mem.authenticate(extra.apiKey)).toBeUndefined();
          expect(await mem.authenticate(w.alice.key.apiKey)).toBeUndefined();
          expect(await mem.authenticate(w.platform.key.apiKey)).toBe(w.platform.id);
          expect((await auditStore(ledgerOf(mem))).findings).toEqual([]);
        } finally {
          await w.raw.close();
        }
      },
    );

    it(
      'a key table edited at rest authenticates nothing and is an audit finding',
      { timeout: 300_000 },
      async () => {
        const w = await world(make);
        try {
          const revoked = await w.mem.adminIssueKey({ by: w.ops, principal: w.alice.id });
          await w.mem.adminRevokeKey({ by: w.ops, keyId: revoked.keyId });
          // 1. A rogue row for the operator: a key no statement issued.
          const rogue = 'mwk_rogue-key-inserted-at-rest-0123456789abcdef';
          await w.raw.sql(
            'INSERT INTO api_keys (key_hash, principal, created_ns) VALUES ($1, $2, $3)',
            [Buffer.from(keyIdOf(rogue), 'hex'), w.ops, '1'],
          );
          // 2. A revocation undone.
          await w.raw.sql('UPDATE api_keys SET revoked = false WHERE key_hash = $1', [
            Buffer.from(revoked.keyId, 'hex'),
          ]);
          // 3. Alice's key re-pointed at the operator.
          await w.raw.sql('UPDATE api_keys SET principal = $1 WHERE key_hash = $2', [
            w.ops,
            Buffer.from(w.alice.key.keyId, 'hex'),
          ]);
          const mem = await w.fresh();
          expect(await mem.authenticate(rogue)).toBeUndefined();
          expect(await mem.authenticate(revoked.apiKey)).toBeUndefined();
          expect(await mem.authenticate(w.alice.key.apiKey)).toBe(w.alice.id);
          expect(await findingsOn(mem, `apikey:${keyIdOf(rogue)}`)).toEqual(['KEY_UNKNOWN']);
          expect(await findingsOn(mem, `apikey:${revoked.keyId}`)).toEqual(['KEY_INVALID']);
          expect(await findingsOn(mem, `apikey:${w.alice.key.keyId}`)).toEqual(['KEY_INVALID']);
        } finally {
          await w.raw.close();
        }
      },
    );

    it(
      'a store whose keys predate API-key statements has them adopted once, revocations kept',
      { timeout: 300_000 },
      async () => {
        const raw = await make();
        try {
          const keys = new MemoryKeySource();
          const anchor = new MemoryKeySource();
          const mem = await memoryOn(await raw.open(), keys, anchor);
          // An older version's store: principals in the signed registry, key rows only.
          const bob = await ledgerOf(mem).registerPrincipal('user', 'bob');
          const live = 'mwk_issued-by-an-older-version-live-000000000';
          const gone = 'mwk_issued-by-an-older-version-revoked-00000';
          const s = ledgerOf(mem).storage;
          for (const t of [live, gone])
            await s.putApiKey({
              principalId: bob.id,
              keyHash: Buffer.from(keyIdOf(t), 'hex'),
              createdAtNs: 1n,
            });
          await s.revokeApiKey(Buffer.from(keyIdOf(gone), 'hex'));
          const opened = await memoryOn(await raw.open(), keys, anchor);
          const adopted = (await apiKeyStatements(opened)).map((x) => [x.op, x.keyId, x.by]);
          expect([...adopted].sort()).toEqual(
            [
              ['apikey', keyIdOf(live), undefined],
              ['apikey', keyIdOf(gone), undefined],
              ['apikey-revoke', keyIdOf(gone), undefined],
            ].sort(),
          );
          // The revocation follows the key it revokes.
          const at = (op: string, k: string) => adopted.findIndex((x) => x[0] === op && x[1] === k);
          expect(at('apikey-revoke', keyIdOf(gone))).toBeGreaterThan(at('apikey', keyIdOf(gone)));
          expect(await opened.authenticate(live)).toBe(bob.id);
          expect(await opened.authenticate(gone)).toBeUndefined();
          // Once: a second open appends nothing.
          const again = await memoryOn(await raw.open(), keys, anchor);
          expect(await apiKeyStatements(again)).toHaveLength(3);
          expect((await auditStore(ledgerOf(again))).findings).toEqual([]);
        } finally {
          await raw.close();
        }
      },
    );
  },
);
