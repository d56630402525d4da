/**
 * @module integrations/ai-sdk/gate
 * The real sensitive-action gate behind the AI SDK integration: `gateFromMemory` adapts
 * `Memory.checkAction` (MemLineage §3.7; every verdict audited) to the {@link ActionGate}
 * shape `memwardenToolApproval` and `wrapToolsWithGate` run on.
 *
 *     const gate = gateFromMemory(memory, principal);
 *     const tools = wrapToolsWithGate(myTools, gate, () => {
 *       const r = mw.lastRetrieval(threadId);
 *       return { text: r?.context ?? '', seal: r?.seal ?? '' };
 *     });
 */
import type { MemoryApi } from '../../memory/api.js';
import type { ActionGate, GateCall, GateContext, GateVerdict } from './tool-approval.js';

/** An {@link ActionGate} that asks `memory.checkAction` on behalf of `principal`. */
export function gateFromMemory(
  memory: Pick<MemoryApi, 'checkAction'>,
  principal: string,
): ActionGate {
  return {
    async check(call: GateCall, context: GateContext): Promise<GateVerdict> {
      const v = await memory.checkAction({
        principal,
        call: { tool: call.tool, arguments: call.arguments },
        context: context.text,
        seal: context.seal,
        ...(context.sources === undefined ? {} : { sources: context.sources }),
        ...(context.userRequest === undefined ? {} : { userRequest: context.userRequest }),
      });
      return {
        kind: v.kind,
        reason: v.reason,
        ...(v.repairedArguments === undefined
          ? {}
          : { repairedArguments: { ...v.repairedArguments } }),
      };
    },
  };
}
