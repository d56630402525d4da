/**
 * @module eval/memlineage/env
 * A tool environment over a harness world: records ingested into memory remember their
 * ingest-time source class and field values (what a production integration labels at ingest),
 * from which Layer 2 parameter provenance is offered to the gate; and the executor that gates
 * and dispatches a plan (Strip-and-Retry re-plans on the stripped context).
 */
import type { ParameterSource, ToolCallInput, Verdict } from '../../core/gate/index.js';
import type { World, Writer } from './world.js';

/** A record the environment ingests into memory. */
export interface Rec {
  readonly writer: Writer;
  readonly content: string;
  readonly cls: string;
  readonly fields: Readonly<Record<string, readonly (string | number)[]>>;
}

/** A memory world plus the ingest-time provenance of its records. */
export class Env {
  readonly provenance = new Map<string, Rec>();
  readonly ids: string[] = [];
  constructor(readonly world: World) {}
  async ingest(r: Rec): Promise<void> {
    const id = await this.world.write({ writer: r.writer, content: r.content });
    this.provenance.set(id, r);
    this.ids.push(id);
  }
  /** Parameter sources for `call` from the records whose segments are in `context`. */
  sources(call: ToolCallInput, segmentIds: readonly string[]): Record<string, ParameterSource[]> {
    const out: Record<string, ParameterSource[]> = {};
    for (const param of Object.keys(call.arguments)) {
      const list: ParameterSource[] = [];
      for (const id of segmentIds) {
        const r = this.provenance.get(id);
        for (const value of r?.fields[param] ?? [])
          list.push({ value, sourceClass: r?.cls as string, entryId: id });
      }
      out[param] = list;
    }
    return out;
  }
}

export const key = (c: ToolCallInput): string => JSON.stringify([c.tool, c.arguments]);

/** Gate and dispatch a plan; strip-and-retry re-plans on the stripped context (≤ 3 rounds). */
export function execute(
  env: Env,
  segIds: readonly string[],
  ctx: { context: string; seal: string },
  plan: (context: string) => ToolCallInput[],
): { done: ToolCallInput[]; verdicts: Verdict[] } {
  const done: ToolCallInput[] = [];
  const verdicts: Verdict[] = [];
  const seen = new Set<string>();
  let context = ctx.context;
  let queue = plan(context);
  for (let round = 0; round < 4 && queue.length > 0; round++) {
    let retry: string | undefined;
    for (const call of queue) {
      seen.add(key(call));
      const v = env.world.decide(
        { ...call },
        { context, seal: ctx.seal },
        { sources: env.sources(call, segIds) },
      );
      verdicts.push(v);
      if (v.kind === 'allow') done.push(call);
      else if (v.kind === 'repair_and_retry' && v.repairedArguments !== undefined)
        done.push({ tool: call.tool, arguments: v.repairedArguments });
      else if (v.kind === 'strip_and_retry' && v.retryContext !== undefined && retry === undefined)
        retry = v.retryContext;
    }
    if (retry === undefined) break;
    context = retry;
    queue = plan(context).filter((c) => !seen.has(key(c)));
  }
  return { done, verdicts };
}
