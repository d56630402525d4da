/**
 * @module server/schemas
 * Request schemas for the HTTP API. Every object is strict (an unknown field is an error, so a
 * typo never silently drops an option), every number bounded, every enum closed. The same
 * schemas feed the OpenAPI document, so the document cannot drift from what is enforced.
 */
import { z } from 'zod';
import { SourceTiers, TrustLabels } from '../core/trust.js';

/** Largest `content` / `query`, in UTF-8 bytes (413 `INPUT_TOO_LARGE` beyond). */
export const MAX_CONTENT_BYTES = 64 * 1024;
/** Largest request body, in bytes: room for 64 KiB of content even when JSON-escaped. */
export const MAX_BODY_BYTES = 512 * 1024;
/**
 * Deepest nesting of a request body (objects and arrays), decided on the text before parsing:
 * a valid document nested ~1,500 deep overflowed a recursive validator (HTTP 500; issue 17).
 */
export const MAX_BODY_DEPTH = 64;
/**
 * Sanity bound on the write path's string fields (UTF-16 units). The write path decides the
 * real bounds — in code points and bytes, the same on every channel (`memory/write/limits.ts`)
 * — so the schema only keeps absurd values out of parsing.
 */
const WRITE_FIELD_MAX = 65_536;

/** Entry and review ids: UUIDs today; a conservative charset, so ids never need escaping. */
export const IdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'malformed id');
const Tier = z.enum(SourceTiers);
/** Reasons (delete, update, review decisions): the write path bounds them (code points, bytes). */
const Reason = z.string().min(1).max(65_536);
const MAX_TTL_MS = 100 * 365 * 24 * 3600 * 1000;
/**
 * A precomputed embedding from the store's model (384 numbers for the default MiniLM).
 * Accepted only when the server was started with client embeddings on (ADR 0012); the memory
 * layer checks the dimension and normalises.
 */
const Embedding = z.array(z.number()).min(1).max(4096);

/** Caller metadata: a JSON object (signed with the memory; issue 20). */
const Metadata = z.record(z.string().min(1).max(256), z.json());
/** An instant: ISO 8601 text or epoch milliseconds. */
const Instant = z.union([z.string().min(1).max(64), z.number()]);
/** A run / agent scope id. */
const ScopeId = z.string().min(1).max(256);
/** Mem0-style filters (`core/filter`); the memory layer checks them (400 `INPUT_INVALID`). */
const Filters = z.record(z.string().min(1).max(512), z.json());

/** One message of a conversation add. */
const Message = z.strictObject({
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  content: z.string().min(1),
  name: z.string().min(1).max(128).optional(),
  eventAt: Instant.optional(),
  metadata: Metadata.optional(),
});

export const AddBodySchema = z.strictObject({
  /** The memory's text; or give `messages` (a conversation) instead. */
  content: z.string().min(1).optional(),
  messages: z.array(Message).min(1).max(1000).optional(),
  /** With `messages`: false stores the turns even when an extraction model is configured. */
  infer: z.boolean().optional(),
  metadata: Metadata.optional(),
  eventAt: Instant.optional(),
  runId: ScopeId.optional(),
  agentId: ScopeId.optional(),
  tier: Tier.optional(),
  source: z.string().min(1).max(WRITE_FIELD_MAX).optional(),
  kind: z.string().min(1).max(WRITE_FIELD_MAX).optional(),
  parents: z.array(IdSchema).max(64).optional(),
  weights: z.array(z.number().min(0).max(1)).max(64).optional(),
  /** The conversation thread whose last retrieval is the candidate parent set (auto-attribution). */
  threadId: z.string().min(1).max(WRITE_FIELD_MAX).optional(),
  /** Derived from the last retrieval made without a thread (auto-attribution without threads). */
  fromLastRetrieval: z.boolean().optional(),
  /** An operator's lineage override (parents and weights as given; audited). */
  lineageOverride: z.boolean().optional(),
  derived: z.boolean().optional(),
  multiHop: z.boolean().optional(),
  /** Milliseconds until expiry; `null` never expires (subject to the memory layer's policy). */
  ttlMs: z.number().int().min(1).max(MAX_TTL_MS).nullable().optional(),
  embedding: Embedding.optional(),
});

const Verdict = z.enum(['correct', 'malicious', 'neither']);
/**
 * Smoothed retrieval (SMSR, issue 19): an explicit pool size `m`, or a target `delta` for the
 * adversary budget `t` (the planner picks m). Bounds as the memory layer enforces them.
 */
export const SmoothingSchema = z.union([
  z.strictObject({
    m: z.number().int().min(1).max(500),
    k: z.number().int().min(1).max(500).optional(),
    runs: z.number().int().min(1).max(101).optional(),
    t: z.number().int().min(0).max(500).optional(),
  }),
  z.strictObject({
    delta: z.number().gt(0).max(1),
    t: z.number().int().min(0).max(500),
    k: z.number().int().min(1).max(500).optional(),
    runs: z.number().int().min(1).max(101).optional(),
  }),
]);

/**
 * The caller's verdicts on the answers of a smoothed search's ablated contexts, one per context
 * in order, with the parameters the search returned (`smoothing.t / poolSize / k / runs /
 * target`): the server recomputes the certificate, never takes one from the request.
 */
export const VoteBodySchema = z.strictObject({
  t: z.number().int().min(0).max(500),
  poolSize: z.number().int().min(1).max(500),
  k: z.number().int().min(1).max(500),
  runs: z.number().int().min(1).max(101),
  target: z.number().gt(0).max(1).optional(),
  verdicts: z.array(Verdict).min(1).max(101),
});

/** Graph search (issue 19): selection over the caller's graph; `action` asks for AuthSelect. */
export const GraphSearchBodySchema = z.strictObject({
  query: z.string().min(1),
  selector: z.enum(['ppr', 'community', 'rrf']).optional(),
  k: z.number().int().min(1).max(50).optional(),
  seeds: z.array(z.string().min(1).max(256)).min(1).max(32).optional(),
  action: z.string().min(1).max(128).optional(),
});

export const SearchBodySchema = z.strictObject({
  query: z.string().min(1),
  limit: z.number().int().min(1).max(100).optional(),
  mode: z.enum(['normal', 'research']).optional(),
  threshold: z.number().min(0).max(1).optional(),
  ranking: z.enum(['vector', 'lexical', 'hybrid']).optional(),
  allowTiers: z.array(Tier).min(1).max(SourceTiers.length).optional(),
  threadId: z.string().min(1).max(128).optional(),
  embedding: Embedding.optional(),
  /** Mem0-style filters on metadata, tier, kind, source, runId, agentId, createdAt, eventAt. */
  filters: Filters.optional(),
  runId: ScopeId.optional(),
  agentId: ScopeId.optional(),
  /** Recency-aware ranking: scores halve every `halfLifeMs` of age (event time, else write time). */
  recency: z.strictObject({ halfLifeMs: z.number().positive().max(MAX_TTL_MS) }).optional(),
  smoothing: SmoothingSchema.optional(),
});

export const UpdateBodySchema = z.strictObject({
  content: z.string().min(1),
  reason: z.string().min(1).max(WRITE_FIELD_MAX).optional(),
  metadata: Metadata.optional(),
  eventAt: Instant.optional(),
});

export const ReasonBodySchema = z.strictObject({ reason: Reason.optional() });

export const PurgeBodySchema = z
  .strictObject({
    source: z.string().min(1).max(2048).optional(),
    /** Lowercase hex SHA-256 of the content's UTF-8 bytes. */
    contentHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'contentHash must be 64 lowercase hex digits')
      .optional(),
    /** Operator only: purge across every principal (audited). */
    allPrincipals: z.boolean().optional(),
    reason: Reason.optional(),
  })
  .refine((b) => (b.source === undefined) !== (b.contentHash === undefined), {
    message: 'give exactly one of source, contentHash',
  });

/** A non-negative decimal integer in a query string (no sign, no exponent, no leading zeros). */
const QueryInt = (max: number) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().min(0).max(max));

export const ListQuerySchema = z.strictObject({
  limit: QueryInt(1000).optional(),
  offset: QueryInt(1_000_000_000).optional(),
  source: z.string().min(1).max(2048).optional(),
  runId: ScopeId.optional(),
  agentId: ScopeId.optional(),
  /** Mem0-style filters as JSON text. */
  filters: z.string().min(2).max(16_384).optional(),
});
/** A comma-separated list in a query string (`tier=USER_VERIFIED,EXTERNAL_WEB`). */
const QueryList = <T extends z.ZodType<unknown, string>>(item: T, max: number) =>
  z
    .string()
    .min(1)
    .max(4096)
    .transform((v) => v.split(','))
    .pipe(z.array(item).min(1).max(max));
const IsoTime = z.iso.datetime({ offset: true });

/** `GET /v1/investigate`: the investigation listing's filters (see `InvestigateOptions`). */
export const InvestigateQuerySchema = z.strictObject({
  owner: z.string().min(1).max(256).optional(),
  tier: QueryList(Tier, SourceTiers.length).optional(),
  kind: QueryList(z.string().min(1).max(64), 16).optional(),
  source: z.string().min(1).max(2048).optional(),
  label: QueryList(z.enum(TrustLabels), TrustLabels.length).optional(),
  status: QueryList(z.enum(['live', 'deleted', 'superseded', 'expired']), 4).optional(),
  q: z.string().min(1).max(512).optional(),
  semantic: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  from: IsoTime.optional(),
  to: IsoTime.optional(),
  cursor: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'malformed cursor')
    .optional(),
  limit: QueryInt(200).optional(),
});
export const ReviewsQuerySchema = z.strictObject({
  status: z.enum(['pending', 'approved', 'rejected']).optional(),
});
export const ConsistencyQuerySchema = z.strictObject({
  from: QueryInt(Number.MAX_SAFE_INTEGER),
  to: QueryInt(Number.MAX_SAFE_INTEGER),
});
export const GateDecisionsQuerySchema = z.strictObject({ limit: QueryInt(1000).optional() });
/** An evaluation report: a folder name under the reports directory. */
export const ReportNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'malformed report name');
export const DeleteQuerySchema = z.strictObject({ reason: Reason.optional() });
export const EmptyQuerySchema = z.strictObject({});

/** Largest rendered context accepted by the gate route, in UTF-8 bytes. */
export const MAX_CONTEXT_BYTES = 256 * 1024;

const ParameterSourceSchema = z.strictObject({
  /** The candidate value (any JSON). */
  value: z.json(),
  sourceClass: z.string().min(1).max(64),
  entryId: IdSchema.optional(),
});

/** `POST /v1/actions/check`: a proposed tool call and the sealed context the model saw. */
export const ActionCheckBodySchema = z.strictObject({
  call: z.strictObject({
    tool: z.string().min(1).max(128),
    arguments: z.record(z.string().max(128), z.json()),
  }),
  // Bounded by the body limit here; MAX_CONTEXT_BYTES (413) is checked by the route.
  context: z.string().max(MAX_BODY_BYTES),
  seal: z.string().regex(/^[0-9a-f]{32}$/, 'seal must be 32 lowercase hex chars'),
  sources: z.record(z.string().min(1).max(128), z.array(ParameterSourceSchema).max(32)).optional(),
  userRequest: z.string().min(1).max(8192).optional(),
});

export type AddBody = z.infer<typeof AddBodySchema>;
export type SearchBody = z.infer<typeof SearchBodySchema>;
