/**
 * The guards of a call in the journal (SPEC §11 "How it sits in the journal"): PRECONDITION and LOOKUP
 * reads checked against their call's declared template, deciding whether an approved call may start and
 * a started write is settled. A precondition read just before a proposal becomes the approval's `facts`.
 */
import type { StepRow } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import { toolCallDigest } from '../../shared/canonical.js';
import { checkGuard, type Guard, guardArguments } from '../../shared/guard.js';
import type { Standing } from '../approvals/index.js';
import type { EngineContext } from '../common/index.js';
import { type AgentWork, bindingPolicy, type ToolBinding } from '../definitions/index.js';
import { argumentsOf, type JournalStepInput } from './input.js';
import type { JournalState } from './state.js';

const ENDED: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'OUTCOME_UNKNOWN']);

export function bindingOf(work: AgentWork | null, ref: string | null): ToolBinding | undefined {
  return ref ? work?.toolBindings.find((b) => b.ref === ref) : undefined;
}

/** A binding's precondition or lookup in the shape both sides read (null when it declares none). */
export function guardOf(binding: ToolBinding | undefined, purpose: StepRow['purpose']): Guard | null {
  const { precondition: p, lookup: l } = bindingPolicy(binding ?? {});
  if (purpose === 'PRECONDITION' && p) return { tool: p.tool, arguments: p.arguments, expression: p.expect };
  if (purpose === 'LOOKUP' && l) return { tool: l.tool, arguments: l.arguments, expression: l.found };
  return null;
}

function callArguments(ctx: EngineContext, call: StepRow): Record<string, unknown> {
  return (argumentsOf(ctx.sealer.openJson(call.requestEnc)) ?? {}) as Record<string, unknown>;
}

/**
 * SPEC §4 order: the sequence is checked before the binding. A new step follows an ended call — except a
 * guard read of the open call: a PRECONDITION read while it is APPROVED, a LOOKUP read while it is
 * STARTED, each of exactly the declared tool and arguments for that call (else DIVERGENT_STEP).
 */
export function assertNextSequence(j: JournalState, ctx: EngineContext, input: JournalStepInput): void {
  const last = j.last;
  const next = (last?.sequence ?? 0) + 1;
  if (input.sequence !== next) {
    throw new EngineError(
      'SEQUENCE_OUT_OF_ORDER',
      `The next step of attempt ${input.attempt} is ${next}, not ${input.sequence}.`,
      { expectedSequence: next },
    );
  }
  const purpose = input.purpose ?? 'CALL';
  if (purpose !== 'CALL' && input.kind !== 'TOOL_CALL')
    throw invalid(`A ${purpose} step is a read of a tool (kind TOOL_CALL).`, 'purpose');
  const call = j.lastCall();
  const open = call && !ENDED.has(call.state) ? call : undefined;
  if (!open) {
    if (last && !ENDED.has(last.state)) throw unfinished(last.sequence, last.state, input.sequence);
    if (purpose === 'LOOKUP')
      throw invalid('A LOOKUP read settles a write left STARTED; there is none open here.', 'purpose');
    if (purpose === 'PRECONDITION') assertDeclared(j.task.agentWork, input);
    return;
  }
  const wanted = open.state === 'APPROVED' ? 'PRECONDITION' : open.state === 'STARTED' ? 'LOOKUP' : null;
  if (purpose !== wanted || (last && last.sequence !== open.sequence && !ENDED.has(last.state)))
    throw unfinished(open.sequence, open.state, input.sequence);
  const binding = bindingOf(j.task.agentWork, open.toolRef);
  const guard = guardOf(binding, purpose);
  if (!guard) {
    throw new EngineError(
      'SEQUENCE_OUT_OF_ORDER',
      `${open.toolRef} declares no ${purpose.toLowerCase()}; finish step ${open.sequence} before journaling step ${input.sequence}.`,
      { expectedSequence: open.sequence },
    );
  }
  const args = guardArguments(guard, callArguments(ctx, open), open.idempotencyKey);
  const asked = argumentsOf(input.request);
  if (
    input.toolRef !== guard.tool ||
    typeof asked !== 'object' ||
    asked === null ||
    toolCallDigest(guard.tool, asked) !== toolCallDigest(guard.tool, args)
  ) {
    throw new EngineError(
      'DIVERGENT_STEP',
      `The ${purpose.toLowerCase()} of step ${open.sequence} is ${guard.tool} with ${JSON.stringify(args)}; journal exactly that read.`,
      { sequence: open.sequence, tool: guard.tool },
    );
  }
  if (input.state !== 'COMPLETED' && input.state !== 'FAILED')
    throw invalid(`A ${purpose} read is journaled COMPLETED (or FAILED) after it ran.`, 'state');
}

function unfinished(sequence: number, state: string, asked: number): EngineError {
  return new EngineError(
    'SEQUENCE_OUT_OF_ORDER',
    `Step ${sequence} is still ${state}; finish it before journaling step ${asked}.`,
    { expectedSequence: sequence },
  );
}

/** A proposal-time precondition read names the precondition tool of some binding of the node. */
function assertDeclared(work: AgentWork | null, input: JournalStepInput): void {
  const declared = (work?.toolBindings ?? []).some((b) => guardOf(b, 'PRECONDITION')?.tool === input.toolRef);
  if (!declared)
    throw invalid(`${input.toolRef} is not the precondition of any tool bound to this node.`, 'purpose');
}

/**
 * The precondition's answer when the call was proposed: the read just before the proposal, when it is
 * the declared read for these arguments (sealed, as the approval keeps it). Null otherwise.
 */
export function factsFor(
  j: JournalState,
  binding: ToolBinding,
  sequence: number,
  args: Record<string, unknown>,
): string | null {
  const guard = guardOf(binding, 'PRECONDITION');
  const read = j.step(sequence - 1);
  if (!guard || !read || read.purpose !== 'PRECONDITION' || read.state !== 'COMPLETED') return null;
  if (read.digest !== toolCallDigest(guard.tool, guardArguments(guard, args))) return null;
  return read.responseEnc;
}

/**
 * SPEC §11, third check at STARTED: the call's last step is a precondition read after the decision, under
 * this lease, that answered (else PRECONDITION_REQUIRED, changing nothing) and satisfies `expect` (else
 * the explanation: the caller voids the approval, PRECONDITION_FAILED).
 */
export function checkPrecondition(
  j: JournalState,
  ctx: EngineContext,
  call: StepRow,
  binding: ToolBinding | undefined,
  standing: Standing | null,
): string | null {
  const guard = guardOf(binding, 'PRECONDITION');
  if (!guard) return null;
  const last = j.last;
  const read = last && last.purpose === 'PRECONDITION' ? j.step(last.sequence) : undefined;
  const decidedAt = standing?.approval.decidedAt ?? null;
  const leasedAt = j.task.leasedAt;
  const current =
    read &&
    read.sequence > call.sequence &&
    read.state === 'COMPLETED' &&
    (j.insertedHere(read.sequence) ||
      ((!decidedAt || read.createdAt >= decidedAt) && (!leasedAt || read.createdAt >= leasedAt)));
  if (!current) {
    throw new EngineError(
      'PRECONDITION_REQUIRED',
      `Step ${call.sequence} may start only right after its precondition is read: journal ${guard.tool} with purpose PRECONDITION as step ${(last?.sequence ?? call.sequence) + 1} (after the decision, under this lease), then start step ${call.sequence}.`,
      { sequence: call.sequence, tool: guard.tool },
    );
  }
  const outcome = checkGuard(
    guard.expression,
    ctx.sealer.openJson(read.responseEnc),
    callArguments(ctx, call),
  );
  return outcome.holds ? null : outcome.explanation;
}

/**
 * A started write's end after its lookup (SPEC §11 Reconciled): COMPLETED, reconciled, with the answer
 * of the last step when it is this call's LOOKUP read satisfying `found`; else null (sent again).
 */
export function reconciliation(
  j: JournalState,
  ctx: EngineContext,
  call: StepRow,
  binding: ToolBinding | undefined,
): { responseEnc: string | null } | null {
  const guard = guardOf(binding, 'LOOKUP');
  const last = j.last;
  if (!guard || !last || last.purpose !== 'LOOKUP' || last.sequence <= call.sequence) return null;
  const read = j.step(last.sequence);
  if (read?.state !== 'COMPLETED') return null;
  const found = checkGuard(guard.expression, ctx.sealer.openJson(read.responseEnc), callArguments(ctx, call));
  return found.holds ? { responseEnc: read.responseEnc } : null;
}
