/**
 * A small payee graph in a user's scope and a compromised peer's structural attack on it
 * (issue 19 graph-search tests): entries committed as signed ledger entries with the tier and
 * lineage label the write would carry — a peer writing into the user's scope is not something
 * a channel offers (isolation), so the fixture commits below the write path.
 */
import type { SourceTier, TrustLabel } from '../../src/core/trust.js';
import { GRAPH_KIND, type GraphObject, encodeGraphObject } from '../../src/memory/graph/objects.js';
import { committerOf } from '../../src/memory/log/commit.js';
import type { Ledger } from '../../src/memory/log/ledger.js';

export type GraphWrite = (
  writer: string,
  o: GraphObject,
  tier: SourceTier,
  label?: TrustLabel,
) => Promise<string>;

export function graphWriter(ledger: Ledger, ns: string): GraphWrite {
  return async (writer, o, tier, label) =>
    (
      await committerOf(ledger).write({
        writer,
        ns,
        content: encodeGraphObject(o),
        tier,
        kind: GRAPH_KIND,
        ...(label === undefined ? {} : { label }),
      })
    ).entry.id;
}

/** The user's own structure: the landlord is paid via the good account. */
export async function payeeGraph(write: GraphWrite, user: string): Promise<void> {
  const ent = (name: string, entityType: string, observations: string[] = []) =>
    write(user, { t: 'entity', name, entityType, observations }, 'USER_VERIFIED');
  await ent('Landlord', 'person', ['rent is due on the first']);
  await ent('Rent', 'obligation', ['monthly']);
  await ent('GoodIBAN', 'account', ['DE00 1111 2222']);
  await ent('Gym', 'business');
  await ent('GymIBAN', 'account', ['DE00 3333 4444']);
  const rel = (from: string, relationType: string, to: string) =>
    write(user, { t: 'relation', from, to, relationType }, 'USER_VERIFIED');
  await rel('Landlord', 'is paid via', 'GoodIBAN');
  await rel('Rent', 'owed to', 'Landlord');
  await rel('Rent', 'paid into', 'GoodIBAN');
  await rel('Gym', 'is paid via', 'GymIBAN');
}

/** The compromised peer's write: an account entity and heavy edges from the landlord to it. */
export async function payeeAttack(
  write: GraphWrite,
  writer: string,
  tier: SourceTier,
  label?: TrustLabel,
): Promise<void> {
  await write(
    writer,
    { t: 'entity', name: 'EvilIBAN', entityType: 'account', observations: ['XX99 6666'] },
    tier,
    label,
  );
  for (const [from, type] of [
    ['Landlord', 'new account'],
    ['Rent', 'now paid into'],
    ['Landlord', 'prefers'],
  ] as const)
    await write(
      writer,
      { t: 'relation', from, to: 'EvilIBAN', relationType: type, weight: 5 },
      tier,
      label,
    );
}

export const PAYEE_QUESTION = 'Which account is the Landlord paid via for Rent?';
