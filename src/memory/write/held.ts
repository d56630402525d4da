/**
 * @module memory/write/held
 * The sealed held record of the review queue (issue 17 finding 4, ADR 0034): what a held write
 * stores as its review item's payload — one canonical CBOR record of the content, tier,
 * principal, the options approval replays and the lineage resolved when the write was made —
 * and the host's MAC binding it to the item's id and decision state. `reviews.ts` shows and
 * approves only records that open; `memwarden audit` checks every item with {@link auditReviews}.
 */
import { concatBytes, utf8 } from '../../core/bytes.js';
import { decodeStrict, encodeCanonical } from '../../core/codec/cbor.js';
import type { MacKeyring } from '../../core/crypto/hmac.js';
import { sha256 } from '../../core/crypto/sha256.js';
import type { ErrorCode } from '../../core/errors.js';
import { type SourceTier, type TrustLabel, SourceTiers } from '../../core/trust.js';
import type { ReviewRecord, StorageBackend } from '../../ports/storage.js';

/** The record a reviewer is shown and approval replays (canonical CBOR in `payload`). */
export interface HeldRecord {
  readonly v: 1;
  /** The review item's id (binds the payload to its row). */
  readonly id: string;
  readonly principal: string;
  readonly tier: SourceTier;
  readonly content: string;
  readonly reasons: readonly string[];
  readonly created: bigint;
  /** What approval replays besides the content (AddOptions that reach the signed entry). */
  readonly kind?: string;
  readonly source?: string;
  /** The caller's TTL (absent: the tier's; null: never expires). */
  readonly ttlMs?: number | null;
  /** An update held for review: the entry its approval supersedes. */
  readonly sup?: string;
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  readonly label: TrustLabel;
}

/** What the write path hands over to hold a write. */
export interface HoldInput {
  readonly id: string;
  readonly principal: string;
  readonly tier: SourceTier;
  readonly content: string;
  readonly reasons: readonly string[];
  readonly createdAtNs: bigint;
  readonly kind?: string;
  readonly source?: string;
  readonly ttlMs?: number | null;
  readonly sup?: string;
  readonly lineage: {
    readonly parents: readonly string[];
    readonly weights: readonly number[];
    readonly label: TrustLabel;
  };
}

const DOMAIN = utf8.encode('memwarden/review/v1\n');

/** The MAC input: domain ‖ payload ‖ canonical decision state. */
export function macInput(
  payload: Uint8Array,
  state: {
    status: ReviewRecord['status'];
    decidedBy?: string;
    decidedAtNs?: bigint;
    memoryId?: string;
  },
): Uint8Array {
  const st: Record<string, unknown> = { status: state.status };
  if (state.decidedBy !== undefined) st.by = state.decidedBy;
  if (state.decidedAtNs !== undefined) st.at = state.decidedAtNs;
  if (state.memoryId !== undefined) st.memory = state.memoryId;
  return concatBytes(DOMAIN, sha256(payload), encodeCanonical(st));
}

/**
 * The review item to enqueue for a held write: the canonical held record as payload and the
 * host's MAC over it and its pending state.
 */
export function sealHeld(
  macs: MacKeyring,
  h: HoldInput,
): Omit<ReviewRecord, 'status' | 'decidedBy' | 'decidedAtNs' | 'memoryId'> {
  const rec: Record<string, unknown> = {
    v: 1,
    id: h.id,
    principal: h.principal,
    tier: h.tier,
    content: h.content,
    reasons: [...h.reasons],
    created: h.createdAtNs,
    parents: [...h.lineage.parents],
    weights: [...h.lineage.weights],
    label: h.lineage.label,
  };
  if (h.kind !== undefined) rec.kind = h.kind;
  if (h.source !== undefined) rec.source = h.source;
  if (h.ttlMs !== undefined) rec.ttlMs = h.ttlMs;
  if (h.sup !== undefined) rec.sup = h.sup;
  const payload = encodeCanonical(rec);
  const { kid, tag } = macs.tag(macInput(payload, { status: 'pending' }));
  return {
    id: h.id,
    principal: h.principal,
    tier: h.tier,
    content: h.content,
    reasons: [...h.reasons],
    payload,
    createdAtNs: h.createdAtNs,
    macKid: kid,
    mac: tag,
  };
}

/** Why an item does not verify (undefined: it does), and its held record when it does. */
export function openHeld(
  macs: MacKeyring,
  r: ReviewRecord,
): { ok: true; held: HeldRecord } | { ok: false; code: ErrorCode; why: string } {
  if (r.mac === undefined || r.macKid === undefined)
    return {
      ok: false,
      code: 'MAC_INVALID',
      why: 'no MAC (held before items were sealed, or stripped)',
    };
  const m = macs.check(r.macKid, macInput(r.payload, r), r.mac);
  if (!m.ok)
    return {
      ok: false,
      code: m.code,
      why: 'MAC over the payload and decision state does not verify',
    };
  let v: unknown;
  try {
    v = decodeStrict(r.payload, { maxBytes: 1 << 20, maxDepth: 4 });
  } catch {
    return { ok: false, code: 'CODEC_MALFORMED', why: 'payload does not decode' };
  }
  const h = v as Record<string, unknown>;
  if (typeof h !== 'object' || h === null || h.v !== 1)
    return { ok: false, code: 'CODEC_MALFORMED', why: 'payload is not a held record' };
  const created = typeof h.created === 'number' ? BigInt(h.created) : h.created;
  const reasons = h.reasons;
  if (
    h.id !== r.id ||
    h.principal !== r.principal ||
    h.tier !== r.tier ||
    h.content !== r.content ||
    created !== r.createdAtNs ||
    !Array.isArray(reasons) ||
    reasons.length !== r.reasons.length ||
    reasons.some((x, i) => x !== r.reasons[i]) ||
    !(SourceTiers as readonly unknown[]).includes(h.tier) ||
    !Array.isArray(h.parents) ||
    !Array.isArray(h.weights) ||
    (h.sup !== undefined && typeof h.sup !== 'string')
  )
    return { ok: false, code: 'ENTRY_INVALID', why: 'the row disagrees with its held record' };
  return { ok: true, held: { ...(h as unknown as HeldRecord), created: created as bigint } };
}

/** `memwarden audit`'s review check: every item's MAC and binding; an approval names its memory. */
export async function auditReviews(
  storage: StorageBackend,
  macs: MacKeyring,
  count: (c: 'reviews') => void,
  find: (c: 'reviews', code: ErrorCode, subject: string, message: string) => void,
): Promise<void> {
  for (const r of await storage.listReviews()) {
    count('reviews');
    const subject = `review:${r.id}`;
    const o = openHeld(macs, r);
    if (!o.ok) {
      find('reviews', o.code, subject, o.why);
      continue;
    }
    if (
      r.status === 'approved' &&
      (r.memoryId === undefined || (await storage.getEntry(r.memoryId)) === undefined)
    )
      find(
        'reviews',
        'STORAGE_NOT_FOUND',
        subject,
        'approved, but the memory it names is not stored',
      );
  }
}
