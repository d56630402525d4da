/**
 * @module eval/memlineage/world
 * One deterministic memwarden deployment for one harness cell (MemLineage §6.1): a real
 * {@link Ledger} (Ed25519 signing, RFC 6962 log) over the in-memory backend with a manual clock
 * and seeded randomness, a lineage DAG (Equation (1)), the sealed renderer and the gate. The
 * harness only chooses inputs; every label, verification result and verdict comes from here.
 */
import { MemoryBackend } from '../../adapters/memory/index.js';
import { toHex } from '../../core/bytes.js';
import { sha256 } from '../../core/crypto/sha256.js';
import { signerFromSeed } from '../../core/crypto/ed25519.js';
import { keyIdFor } from '../../core/crypto/ids.js';
import { encodeSignedEntry, signEntry, uuidv7, type EntryBody } from '../../core/entry/index.js';
import {
  Gate,
  type DecideInput,
  type ParameterSource,
  type ToolCallInput,
  type Verdict,
} from '../../core/gate/index.js';
import {
  LineageDag,
  propagate,
  type LineageOptions,
  type ParentEdge,
} from '../../core/lineage/index.js';
import { renderSegments, type SegmentInput } from '../../core/render/sentinel.js';
import { effectiveAuthority, type SourceTier, type TrustLabel } from '../../core/trust.js';
import { Ledger } from '../../memory/log/ledger.js';
// Exempt from `commit-only-from-the-write-path` (.dependency-cruiser.cjs): see the rule.
import { committerOf } from '../../memory/log/commit.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../testing/doubles.js';
import type { Profile } from './profiles.js';

/** The principals of a harness world. `bank` is the connector-authenticated bill source. */
export type Writer = 'user' | 'agent' | 'web' | 'tool' | 'bank';

const WRITERS: readonly {
  w: Writer;
  kind: 'user' | 'agent' | 'external' | 'tool';
  tier: SourceTier;
}[] = [
  { w: 'user', kind: 'user', tier: 'USER_VERIFIED' },
  { w: 'agent', kind: 'agent', tier: 'USER_OBSERVED' },
  { w: 'web', kind: 'external', tier: 'EXTERNAL_WEB' },
  { w: 'tool', kind: 'tool', tier: 'EXTERNAL_TOOL' },
  { w: 'bank', kind: 'user', tier: 'USER_VERIFIED' },
];

export interface WriteSpec {
  readonly writer: Writer;
  readonly content: string;
  readonly parents?: readonly string[];
  readonly weights?: readonly number[];
  readonly explicit?: readonly boolean[];
  /** A derived write (default: has parents); `true` with no parents = parent omission. */
  readonly derived?: boolean;
  readonly multiHop?: boolean;
}

/** A recalled, rendered context as the model and the gate see it. */
export interface Recall {
  readonly context: string;
  readonly seal: string;
  readonly segments: readonly {
    readonly id: string;
    readonly label: TrustLabel;
    readonly content: string;
  }[];
  /** Entries the verifier dropped, with the failing stage and code. */
  readonly dropped: readonly {
    readonly id: string;
    readonly stage: string;
    readonly code: string;
  }[];
}

export class World {
  readonly #principals = new Map<Writer, string>();
  readonly #seals: SeededRandom;

  private constructor(
    readonly ledger: Ledger,
    readonly dag: LineageDag,
    readonly profile: Profile,
    readonly gate: Gate,
    private readonly random: SeededRandom,
    seed: string,
  ) {
    this.#seals = new SeededRandom(`memlineage:${seed}:seals`);
  }

  /** Open a fresh world for `profile`; `seed` fixes every key, id, nonce and seal. */
  static async open(profile: Profile, seed: string, lineage?: LineageOptions): Promise<World> {
    const random = new SeededRandom(`memlineage:${seed}`);
    const ledger = await Ledger.open({
      storage: await MemoryBackend.open(),
      keys: new MemoryKeySource(),
      clock: new ManualClock(),
      random,
    });
    const opts = lineage ?? profile.lineage;
    const w = new World(
      ledger,
      new LineageDag(opts),
      profile,
      Gate.fromDocument(profile.policy, { lineage: opts }),
      random,
      seed,
    );
    for (const p of WRITERS)
      w.#principals.set(p.w, (await ledger.registerPrincipal(p.kind, p.w)).id);
    return w;
  }

  /**
   * Sign and commit an entry through the ledger. When the profile records lineage, the label is
   * Equation (1) over the parents' labels (core/lineage `propagate`) and the edges are signed
   * into the entry; otherwise the entry is written without parents (the writer keeps no
   * lineage) and carries its tier's base label.
   */
  async write(spec: WriteSpec): Promise<string> {
    const tier = WRITERS.find((p) => p.w === spec.writer)?.tier as SourceTier;
    const lineage = this.profile.recordLineage;
    const parents = lineage ? (spec.parents ?? []) : [];
    const weights = lineage ? (spec.weights ?? parents.map(() => 1)) : [];
    const explicit = lineage ? spec.explicit : undefined;
    const derived = lineage ? spec.derived : undefined;
    const multiHop = lineage ? spec.multiHop : undefined;
    const edges: ParentEdge[] = parents.map((p, i) => ({
      label: this.dag.effectiveLabel(p),
      weight: weights[i] as number,
      explicit: explicit?.[i] === true,
    }));
    const facts = {
      tier,
      ...(derived === undefined ? {} : { derived }),
      ...(multiHop === undefined ? {} : { multiHop }),
    };
    const label = propagate(facts, edges, this.dag.options);
    const r = await committerOf(this.ledger).write({
      writer: this.#principals.get(spec.writer) as string,
      content: spec.content,
      tier,
      label,
      parents,
      weights,
    });
    const added = this.dag.add({
      id: r.entry.id,
      parents,
      weights,
      ...(explicit === undefined ? {} : { explicit }),
      ...facts,
    });
    if (added !== label) throw new Error('lineage DAG and signed label disagree'); // harness invariant
    return r.entry.id;
  }

  /**
   * AgentPoison-style plant (§5.1): the adversary signs with its own Ed25519 key, which is not in
   * the verifier registry, and writes the bytes straight into the store (the threat model's
   * compromised/shared store). The store's host MAC is applied as any ingest path would; the
   * signature stage of verification is what must reject it.
   */
  async plantUnregistered(content: string): Promise<string> {
    const seed = this.random.randomBytes(32);
    const signer = signerFromSeed(seed);
    const kid = keyIdFor(signer.publicKey.raw);
    const writer = this.#principals.get('web') as string;
    const r = this.random.randomBytes(26);
    const body: EntryBody = {
      t: 'entry',
      v: 1,
      id: uuidv7(1_700_000_000_000n, r.subarray(0, 10)),
      ns: writer,
      writer,
      kid,
      kind: 'note',
      content,
      tier: 'EXTERNAL_WEB',
      label: 'EXTERNAL',
      src: sha256(new TextEncoder().encode(content)),
      ctx: sha256(new Uint8Array(0)),
      parents: [],
      weights: [],
      ts: 1_700_000_000_000_000_000n,
      nonce: r.slice(10, 26),
    };
    const { entry } = signEntry(body, signer);
    const bytes = encodeSignedEntry(entry);
    const { kid: macKid, tag: mac } = this.ledger.keys.macs.tag(bytes);
    await this.ledger.storage.transaction(async (tx) => {
      await tx.putEntry({
        id: entry.id,
        owner: entry.ns,
        tier: entry.tier,
        bytes,
        leafIndex: 1_000_000,
        macKid,
        mac,
        writer: entry.writer,
        kind: entry.kind,
        createdAtNs: entry.ts,
        content,
        srcHash: toHex(entry.src),
      });
    });
    this.dag.add({ id: entry.id, tier: 'EXTERNAL_WEB' });
    return entry.id;
  }

  /**
   * The read path of the profile (§3.6): recall (or not), verify (or not), label, render under a
   * fresh seal. Oracle retrieval: the attack adapter names the entries the query surfaces.
   */
  async recall(ids: readonly string[]): Promise<Recall> {
    const seal = toHex(this.#seals.randomBytes(16));
    const segs: SegmentInput[] = [];
    const dropped: { id: string; stage: string; code: string }[] = [];
    if (this.profile.recall) {
      for (const id of ids) {
        let tier: SourceTier;
        let label: TrustLabel;
        let content: string;
        if (this.profile.verify) {
          const v = await this.ledger.verifyEntry(id);
          if (!v.ok) {
            dropped.push({ id, stage: v.stage, code: v.code });
            continue;
          }
          ({ tier, label, content } = v.entry);
        } else {
          const stored = await this.ledger.storage.getEntry(id);
          if (stored === undefined) continue;
          ({ tier, label, content } = Ledger.decode(stored.bytes));
        }
        if (this.profile.labels === 'trusted') label = 'TRUSTED';
        const authority = this.profile.labels === 'trusted' ? 'T' : effectiveAuthority(tier, label);
        segs.push({ id, label, tier, authority, content });
      }
    }
    return {
      context: renderSegments(segs, seal),
      seal,
      segments: segs.map((s) => ({ id: s.id, label: s.label, content: s.content })),
      dropped,
    };
  }

  /** The gate's verdict on a proposed call against a recalled context (§3.7). */
  decide(
    call: ToolCallInput,
    recall: Pick<Recall, 'context' | 'seal'>,
    extra: {
      sources?: Readonly<Record<string, readonly ParameterSource[]>>;
      userRequest?: string;
    } = {},
  ): Verdict {
    const input: DecideInput = {
      call,
      context: recall.context,
      seal: recall.seal,
      isParentless: (id) => this.dag.isParentless(id),
      ...(extra.sources === undefined ? {} : { sources: extra.sources }),
      ...(extra.userRequest === undefined ? {} : { userRequest: extra.userRequest }),
    };
    return this.gate.decide(input);
  }

  /** The signed, verified label of an entry as the read path sees it. */
  async label(id: string): Promise<TrustLabel> {
    const v = await this.ledger.verifyEntry(id);
    if (!v.ok) throw new Error(`harness entry failed verification: ${v.code}`);
    return v.entry.label;
  }

  async close(): Promise<void> {
    await this.ledger.close();
  }
}
