/**
 * @module console/api
 * The console's only way to the server: the existing `/v1` API with the API key as a bearer
 * token. The key lives in sessionStorage (this tab, until it closes or the user signs out),
 * never in a cookie or a URL.
 */

import type { InclusionProofJson } from './verify.js';

const KEY = 'memwarden.apiKey';

/** A coded failure from the API (`{ error: { code, message } }`). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const session = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (k: string): void => sessionStorage.setItem(KEY, k),
  clear: (): void => sessionStorage.removeItem(KEY),
};

/** Called when the server refuses the key (401), to return to the sign-in screen. */
let onUnauthorised: () => void = () => undefined;
export function setOnUnauthorised(f: () => void): void {
  onUnauthorised = f;
}

export async function api<T>(
  method: 'GET' | 'POST',
  path: string,
  opts: { body?: unknown; key?: string } = {},
): Promise<T> {
  const key = opts.key ?? session.get();
  if (key === null) throw new ApiError(401, 'AUTH_REQUIRED', 'not signed in');
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'omit',
    cache: 'no-store',
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'INTERNAL', 'the server sent something that is not JSON');
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: unknown; message?: unknown } }).error;
    const err = new ApiError(
      res.status,
      typeof e?.code === 'string' ? e.code : 'INTERNAL',
      typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
    );
    if (res.status === 401 && opts.key === undefined) onUnauthorised();
    throw err;
  }
  return json as T;
}

export const enc = encodeURIComponent;

// ---- shapes of the API's answers the console reads (see /openapi.json) ----

export interface MemoryRecord {
  id: string;
  content: string;
  kind: string;
  tier: string;
  label: string;
  authority: string;
  ns: string;
  writer: string;
  source?: string;
  parents: string[];
  weights: number[];
  createdAt: string;
  expiresAt?: string;
  supersedes?: string;
  reviewedBy?: string;
  leafIndex: number;
  leafData: string;
}

export interface ReviewItem {
  id: string;
  principal: string;
  content: string;
  tier: string;
  reasons: string[];
  status: 'pending' | 'approved' | 'rejected';
  createdAt: string;
  decidedBy?: string;
  memoryId?: string;
}

export interface Principal {
  id: string;
  kind: string;
  name: string;
}

export interface LineageNode {
  id: string;
  depth: number;
  state: 'verified' | 'unverified' | 'missing';
  status?: string;
  code?: string;
  memory?: MemoryRecord;
}

export interface LineageGraph {
  root: string;
  nodes: LineageNode[];
  edges: { child: string; parent: string; weight: number }[];
  truncated: boolean;
}

export interface HistoryEvent {
  action: 'add' | 'update' | 'delete';
  id: string;
  actor: string;
  at: string;
  reason?: string;
  memory?: MemoryRecord;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: string;
  note: string;
}

export interface GateDecision {
  id: string;
  at: string;
  principal: string;
  tool: string;
  verdict: string;
  reason: string;
  sensitive: boolean;
  weakestLabel?: string;
  audit: Record<string, unknown>;
}

export interface Report {
  name: string;
  title: string;
  modifiedAt: string;
  bytes: number;
}

/** A visible entry that failed verification (`UnverifiedEntry`). */
export interface Failure {
  id: string;
  code: string;
  stage: string;
}

export interface InvestigationRow {
  id: string;
  leafIndex: number;
  status: 'live' | 'deleted' | 'superseded' | 'expired';
  verified: boolean;
  memory?: MemoryRecord;
  failure?: Failure;
  /** A failing row's columns as stored — NOT verified (operators only). */
  stored?: { owner: string; tier: string; kind?: string; source?: string; writer?: string; createdAt?: string; content?: string };
  score?: number;
}

export interface InvestigationPage {
  rows: InvestigationRow[];
  nextCursor?: string;
  scope: 'all' | 'own';
}

export interface InvestigatedEntry {
  row: InvestigationRow;
  proof?: InclusionProofJson;
  lineage?: LineageGraph;
  /** Its history in the same scope (an operator's: any principal's entry). */
  history?: HistoryEvent[];
  scope: 'all' | 'own';
}
