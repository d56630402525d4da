/**
 * @module memory/graph/objects
 * The structural objects of graph memory as they are stored: each one is the `content` of a
 * signed ledger entry of kind `graph`, written as canonical JSON (keys sorted, no whitespace) so
 * the signed bytes describe the object exactly. Entities, observations, relations, per-passage
 * extractions (mentions + OpenIE triples), synonym / merge links and deletions are all such
 * entries, so every structural write is signed, logged and carries its writer and tier
 * (AuthSelect §4.1: integrity follows the write).
 *
 * Decoding is attacker-facing (entries may come from any principal): `safeDecodeGraphObject`
 * never throws and rejects anything outside the closed set of shapes below.
 */

/** Entry kind of every structural write. */
export const GRAPH_KIND = 'graph';
/** Entry kind of a passage that graph memory indexes. */
export const PASSAGE_KIND = 'passage';

export type GraphObject =
  | {
      readonly t: 'entity';
      readonly name: string;
      readonly entityType: string;
      readonly observations: readonly string[];
    }
  | { readonly t: 'observation'; readonly entity: string; readonly text: string }
  | {
      readonly t: 'relation';
      readonly from: string;
      readonly to: string;
      readonly relationType: string;
      readonly weight?: number;
    }
  | {
      readonly t: 'extraction';
      /** The passage entry this was extracted from (also the entry's first parent). */
      readonly passage: string;
      readonly entities: readonly string[];
      readonly triples: readonly (readonly [string, string, string])[];
    }
  | { readonly t: 'synonym'; readonly a: string; readonly b: string; readonly score: number }
  | { readonly t: 'delete_entity'; readonly name: string }
  | { readonly t: 'delete_observation'; readonly entity: string; readonly text: string }
  | {
      readonly t: 'delete_relation';
      readonly from: string;
      readonly to: string;
      readonly relationType: string;
    };

/** Canonical JSON: object keys sorted, arrays in order, no whitespace. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export function encodeGraphObject(o: GraphObject): string {
  return canonicalJson(o);
}

const MAX_NAME = 256;
const MAX_TEXT = 4096;
const isName = (x: unknown): x is string =>
  typeof x === 'string' && x.length > 0 && x.length <= MAX_NAME;
const isText = (x: unknown): x is string =>
  typeof x === 'string' && x.length > 0 && x.length <= MAX_TEXT;
const isNames = (x: unknown): x is string[] =>
  Array.isArray(x) && x.length <= 512 && x.every(isName);

/** Decode and validate; `undefined` for anything that is not exactly one known shape. */
export function safeDecodeGraphObject(content: string): GraphObject | undefined {
  let v: unknown;
  try {
    v = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(',');
  switch (o.t) {
    case 'entity':
      return keys === 'entityType,name,observations,t' &&
        isName(o.name) &&
        isName(o.entityType) &&
        Array.isArray(o.observations) &&
        o.observations.every(isText)
        ? {
            t: 'entity',
            name: o.name,
            entityType: o.entityType,
            observations: o.observations as string[],
          }
        : undefined;
    case 'observation':
      return keys === 'entity,t,text' && isName(o.entity) && isText(o.text)
        ? { t: 'observation', entity: o.entity, text: o.text }
        : undefined;
    case 'relation': {
      const w = o.weight;
      const okW =
        w === undefined || (typeof w === 'number' && Number.isFinite(w) && w > 0 && w <= 1000);
      const want = w === undefined ? 'from,relationType,t,to' : 'from,relationType,t,to,weight';
      return keys === want && okW && isName(o.from) && isName(o.to) && isName(o.relationType)
        ? {
            t: 'relation',
            from: o.from,
            to: o.to,
            relationType: o.relationType,
            ...(w === undefined ? {} : { weight: w as number }),
          }
        : undefined;
    }
    case 'extraction': {
      if (keys !== 'entities,passage,t,triples' || !isName(o.passage) || !isNames(o.entities))
        return undefined;
      if (!Array.isArray(o.triples) || o.triples.length > 512) return undefined;
      const triples: [string, string, string][] = [];
      for (const t of o.triples) {
        if (!Array.isArray(t) || t.length !== 3 || !t.every(isName)) return undefined;
        triples.push([t[0], t[1], t[2]] as [string, string, string]);
      }
      return { t: 'extraction', passage: o.passage, entities: o.entities, triples };
    }
    case 'synonym':
      return keys === 'a,b,score,t' &&
        isName(o.a) &&
        isName(o.b) &&
        typeof o.score === 'number' &&
        o.score > 0 &&
        o.score <= 1
        ? { t: 'synonym', a: o.a, b: o.b, score: o.score }
        : undefined;
    case 'delete_entity':
      return keys === 'name,t' && isName(o.name) ? { t: 'delete_entity', name: o.name } : undefined;
    case 'delete_observation':
      return keys === 'entity,t,text' && isName(o.entity) && isText(o.text)
        ? { t: 'delete_observation', entity: o.entity, text: o.text }
        : undefined;
    case 'delete_relation':
      return keys === 'from,relationType,t,to' &&
        isName(o.from) &&
        isName(o.to) &&
        isName(o.relationType)
        ? { t: 'delete_relation', from: o.from, to: o.to, relationType: o.relationType }
        : undefined;
    default:
      return undefined;
  }
}

/** Stable key of a relation (duplicates are skipped, as in the reference server). */
export function relationKey(from: string, to: string, relationType: string): string {
  return canonicalJson([from, to, relationType]);
}
