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
import {
  encodeSignedEntry,
  entryLeafData,
  signEntry,
  uuidv7,
  type EntryBody,
  type SignedEntry,
} from '../../core/entry/index.js';
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
import { MerkleLog } from '../../memory/log/log.js';
import { effectiveAuthority, type SourceTier, type TrustLabel } from '../../core/trust.js';
import { Ledger } from '../../memory/log/ledger.js';
// Exempt from `commit-only-from-the-write-path` (.dependency-cruiser.cjs): see the rule.
import { committerOf } from '../../memory/log/commit.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../testing/doubles.js';
import type { Mechanism, Profile } from './profiles.js';

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
    // Ablation: without propagation a derived entry carries its writer tier's base label.
    const label = this.off('propagation')
      ? propagate({ tier }, [], this.dag.options)
      : propagate(facts, edges, this.dag.options);
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
    if (added !== label && !this.off('propagation'))
      throw new Error('lineage DAG and signed label disagree'); // harness invariant
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

  /** Whether the profile switched `m` off (ablation). */
  off(m: Mechanism): boolean {
    return this.profile.ablate?.includes(m) === true;
  }

  /**
   * A store-compromise forgery (issue 18, "signature" decides): the adversary signs an entry
   * claiming `label` / `tier` under the user's principal with its own unregistered key, writes
   * it into the store and appends its leaf to the stored log itself, so log inclusion holds
   * against the log's current root; only the signature stage can refuse it.
   */
  async plantForgedKey(
    content: string,
    label: TrustLabel = 'TRUSTED',
    tier: SourceTier = 'USER_VERIFIED',
  ): Promise<string> {
    const signer = signerFromSeed(this.random.randomBytes(32));
    const writer = this.#principals.get('user') as string;
    const { entry, bytes } = signEntry(
      this.#forgedBody(content, writer, keyIdFor(signer.publicKey.raw), label, tier),
      signer,
    );
    const log = await MerkleLog.open(this.ledger.storage);
    const leafIndex = log.size;
    await log.append([{ data: entryLeafData(entry), entryId: entry.id, kind: 'entry' }]);
    await this.#putForged(entry, bytes, leafIndex);
    this.dag.add({ id: entry.id, tier });
    return entry.id;
  }

  /**
   * A tampered log leaf (issue 18, "inclusion" decides): an entry validly signed with the
   * user's registered key (a draft the user's client signed that was never committed — e.g.
   * held for review) is written into the store pointing at another entry's leaf. The signature
   * verifies; only log inclusion can refuse it.
   */
  async plantSpliced(
    content: string,
    label: TrustLabel = 'TRUSTED',
    tier: SourceTier = 'USER_VERIFIED',
  ): Promise<string> {
    const writer = this.#principals.get('user') as string;
    const anchor = await committerOf(this.ledger).write({
      writer,
      content: 'Anchor: the user’s first note.',
      tier: 'USER_VERIFIED',
    });
    const signer = await this.ledger.keys.signer(anchor.entry.kid);
    if (signer === undefined) throw new Error('harness: user key not held');
    const { entry, bytes } = signEntry(
      this.#forgedBody(content, writer, anchor.entry.kid, label, tier),
      signer,
    );
    await this.#putForged(
      entry,
      bytes,
      (await this.ledger.storage.getEntry(anchor.entry.id))?.leafIndex ?? 0,
    );
    this.dag.add({ id: entry.id, tier });
    return entry.id;
  }

  #forgedBody(
    content: string,
    writer: string,
    kid: string,
    label: TrustLabel,
    tier: SourceTier,
  ): EntryBody {
    const r = this.random.randomBytes(26);
    return {
      t: 'entry',
      v: 1,
      id: uuidv7(1_700_000_000_001n, r.subarray(0, 10)),
      ns: writer,
      writer,
      kid,
      kind: 'note',
      content,
      tier,
      label,
      src: sha256(new TextEncoder().encode(content)),
      ctx: sha256(new Uint8Array(0)),
      parents: [],
      weights: [],
      ts: 1_700_000_000_001_000_000n,
      nonce: r.slice(10, 26),
    };
  }

  async #putForged(entry: SignedEntry, bytes: Uint8Array, leafIndex: number): Promise<void> {
    const { kid: macKid, tag: mac } = this.ledger.keys.macs.tag(bytes);
    await this.ledger.storage.transaction(async (tx) => {
      await tx.putEntry({
        id: entry.id,
        owner: entry.ns,
        tier: entry.tier,
        bytes,
        leafIndex,
        macKid,
        mac,
        writer: entry.writer,
        kind: entry.kind,
        createdAtNs: entry.ts,
        content: entry.content,
        srcHash: toHex(entry.src),
      });
    });
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
            const accepted = await this.#ablatedAccept(id, v.stage);
            if (accepted === undefined) {
              dropped.push({ id, stage: v.stage, code: v.code });
              continue;
            }
            ({ tier, label, content } = accepted);
          } else ({ tier, label, content } = v.entry);
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
      context: this.off('escaping') ? renderUnescaped(segs, seal) : renderSegments(segs, seal),
      seal,
      segments: segs.map((s) => ({ id: s.id, label: s.label, content: s.content })),
      dropped,
    };
  }

  /**
   * Ablation of a verification stage: an entry whose only failure is the switched-off stage is
   * accepted with what it claims. Without the signature stage the log inclusion is still
   * checked (its leaf, at its index, commits exactly these bytes); without the inclusion stage
   * the signature was already checked (verification stops at the first failure, in order).
   */
  async #ablatedAccept(id: string, stage: string): Promise<SignedEntry | undefined> {
    const stored = await this.ledger.storage.getEntry(id);
    if (stored === undefined) return undefined;
    const entry = Ledger.decode(stored.bytes);
    if (stage === 'inclusion' && this.off('inclusion')) return entry;
    if (stage === 'signature' && this.off('signature')) {
      const leaf = await this.ledger.storage.getLeaf(stored.leafIndex);
      const want = entryLeafData(entry);
      const same =
        leaf !== undefined &&
        leaf.data.length === want.length &&
        leaf.data.every((b, i) => b === want[i]);
      return same ? entry : undefined;
    }
    return undefined;
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
    if (this.off('gate')) return ALLOW_ALL(call);
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

/** The sentinel format without `escapeContent` (the "escaping" ablation only). */
function renderUnescaped(segments: readonly SegmentInput[], seal: string): string {
  return segments
    .map(
      (s) =>
        `[BEGIN MEMORY entry_id=${s.id} trust=${s.label} tier=${s.tier} authority=${s.authority} seal=${seal}]\n` +
        `${s.content}\n[END MEMORY seal=${seal}]`,
    )
    .join('\n');
}

/** The "gate" ablation: every call dispatches. */
function ALLOW_ALL(call: ToolCallInput): Verdict {
  const audit = {
    tool: call.tool,
    verdict: 'allow' as const,
    reason: 'clean' as const,
    sensitive: false,
    mode: 'deny' as const,
    usedSources: [],
    rejectedSources: [],
    repairs: [],
    unauthorisedParams: [],
    untracedParams: [],
  };
  return { kind: 'allow', reason: 'clean', usedSources: [], rejectedSources: [], audit };
}
