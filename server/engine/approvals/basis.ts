/**
 * What the agent saw and said when it proposed a call (SPEC §11 `basis`, seed 001 §四.3): the node's
 * inputs, the model's text next to the call and this attempt's tool calls before it, all from the journal
 * and the frozen agent profile (never free text the model could dress up as the engine's), each call's
 * arguments as the evidence policy keeps them (`redact`); and what happens on approval, in one sentence.
 */
import { and, asc, eq, lt } from 'drizzle-orm';
import { externalTasks, steps } from '../../db/schema.js';
import { type EngineContext, idempotencyKeyFor } from '../common/index.js';
import { bindingPolicy, redactArguments, type ToolBinding } from '../definitions/index.js';

export async function approvalBasis(
  ctx: EngineContext,
  a: { taskId: string; attempt: number; sequence: number },
) {
  const [task] = await ctx.db
    .select({ agentWork: externalTasks.agentWork })
    .from(externalTasks)
    .where(eq(externalTasks.id, a.taskId));
  const before = await ctx.db
    .select()
    .from(steps)
    .where(and(eq(steps.taskId, a.taskId), eq(steps.attempt, a.attempt), lt(steps.sequence, a.sequence)))
    .orderBy(asc(steps.sequence));
  const lastModel = before.filter((s) => s.kind === 'MODEL_CALL').at(-1);
  const redactedPaths: string[] = [];
  // one part of call i as the evidence policy keeps it; where something was withheld goes to redactedPaths
  const shown = (i: number, part: string, value: unknown, paths: readonly string[]) => {
    const r = redactArguments(value, paths);
    redactedPaths.push(
      ...r.redactedPaths.map((p) => `priorCalls[${i}].${part}${p.startsWith('[') ? '' : '.'}${p}`),
    );
    return r.view;
  };
  const priorCalls = before
    // the guard reads are the engine's, not the agent's (the precondition's answer is `facts`)
    .filter((s) => s.kind === 'TOOL_CALL' && s.purpose === 'CALL')
    .map((s, i) => {
      const request = ctx.sealer.openJson<{ arguments?: unknown }>(s.requestEnc);
      const binding = task?.agentWork?.toolBindings.find((b) => b.ref === s.toolRef);
      const response = s.responseEnc ? ctx.sealer.openJson(s.responseEnc) : null;
      return {
        sequence: s.sequence,
        toolRef: s.toolRef ?? '',
        arguments: shown(i, 'arguments', request?.arguments ?? {}, binding?.redact ?? []),
        response: shown(i, 'response', response, bindingPolicy(binding ?? {}).redactResult),
        error: s.errorEnc ? ctx.sealer.openJson<string>(s.errorEnc) : null,
        state: s.state,
      };
    });
  return {
    inputs: task?.agentWork?.inputs ?? {},
    modelText: lastModel?.responseEnc ? textOf(ctx.sealer.openJson(lastModel.responseEnc)) : null,
    priorCalls,
    redactedPaths,
  };
}

export type ApprovalBasis = Awaited<ReturnType<typeof approvalBasis>>;
export type BasisCall = ApprovalBasis['priorCalls'][number];

/** The text of an assistant message (a string, or the text parts of a content list); null when none. */
function textOf(message: unknown): string | null {
  const content = (message as { content?: unknown } | null)?.content;
  const parts = Array.isArray(content) ? (content as { type?: string; text?: unknown }[]) : [];
  const text =
    typeof content === 'string'
      ? content
      : parts.map((p) => (p.type === 'text' ? String(p.text ?? '') : '')).join('');
  return text.trim() === '' ? null : text;
}

/** What happens when the call is approved, in one sentence (SPEC §11 `onApproval`). */
export function onApprovalSentence(
  binding: ToolBinding | undefined,
  a: { toolRef: string; taskId: string; attempt: number; sequence: number },
): string {
  if (binding?.transport === 'delegate') {
    return `The engine starts the process ${binding.tool} with these arguments as a child of this instance, once; the agent waits for its result.`;
  }
  const p = bindingPolicy(binding ?? {});
  const first = p.precondition
    ? `Right before, the worker reads ${p.precondition.tool} and the call runs only if ${p.precondition.expect}; then it`
    : 'The worker';
  const unknown = p.lookup ? `it first asks ${p.lookup.tool} whether the call took effect` : null;
  if (binding?.idempotency === 'key') {
    const key = idempotencyKeyFor(a.taskId, a.attempt, a.sequence);
    return `${first} calls ${a.toolRef} with these arguments once, with idempotency key ${key}; if it is interrupted ${unknown ? `${unknown}, else sends` : 'it sends'} the same call again with the same key.`;
  }
  return unknown
    ? `${first} calls ${a.toolRef} with these arguments once, without an idempotency key: if it is interrupted ${unknown}; only if that finds nothing is it sent once more.`
    : `${first} calls ${a.toolRef} with these arguments once, without an idempotency key: if it is interrupted it is not sent again, and a person is asked what happened.`;
}
