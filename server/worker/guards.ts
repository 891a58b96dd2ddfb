/**
 * The guard reads of a call (SPEC §11): the precondition at proposal time (the approval's facts) and again
 * right before the approved call starts, and the lookup that settles a write of unknown outcome. Each is a
 * journaled TOOL_CALL with its purpose, which the engine checks with the same code (server/shared/guard.ts).
 */
import { checkGuard, factsChangedReason, guardArguments } from '../shared/guard.js';
import { AttemptFailure, type Attempt } from './attempt.js';
import { GraphQLRequestError, type Step, type StepWrite, type ToolBinding } from './graphql.js';
import type { ToolCallResult } from './mcp.js';

type Purpose = 'PRECONDITION' | 'LOOKUP';
type Guard = NonNullable<ToolBinding['precondition']>;

export class GuardReads {
  constructor(
    private readonly at: Attempt,
    private readonly bindings: () => ToolBinding[],
    /** Calls a read tool (the tool steps' own call, so reads and writes share retries and logging). */
    private readonly read: (binding: ToolBinding, args: Record<string, unknown>) => Promise<ToolCallResult>,
  ) {}

  /** Runs the guard read at `sequence` and holds its end back (it travels with the next step). */
  private async run(
    purpose: Purpose,
    guard: Guard,
    callArgs: Record<string, unknown>,
    key: string | null,
    sequence: number,
  ): Promise<{ result: ToolCallResult; end: StepWrite }> {
    const binding = this.bindings().find((b) => b.ref === guard.tool);
    if (!binding) {
      throw new AttemptFailure(
        'TOOL_CONTRACT_MISMATCH',
        `the ${purpose.toLowerCase()} tool ${guard.tool} is not bound to this node`,
      );
    }
    const args = guardArguments(guard, callArgs, key);
    const result = await this.read(binding, args);
    const end: StepWrite = {
      sequence,
      kind: 'TOOL_CALL',
      toolRef: guard.tool,
      purpose,
      request: { callId: `${purpose.toLowerCase()}-${sequence}`, arguments: args },
      ...ended(result),
    };
    this.at.end(end, true);
    this.at.log.info(
      { event: `guard.${purpose.toLowerCase()}`, sequence, toolRef: guard.tool, ok: result.ok },
      'guard read',
    );
    return { result, end };
  }

  /** Before a proposal: the precondition at the cursor (a failed read too: the approval shows no facts). */
  async beforeProposal(binding: ToolBinding, callArgs: Record<string, unknown>): Promise<void> {
    const guard = binding.precondition;
    if (!guard) return;
    await this.run('PRECONDITION', guard, callArgs, null, this.at.seq);
    this.at.next();
  }

  /**
   * Right before the approved call starts: the precondition, journaled with the call's STARTED. Returns the
   * engine's answer, or the step REJECTED when the facts changed (the model reads which, and re-plans).
   */
  async startApproved(binding: ToolBinding, step: Step, start: () => Promise<Step>): Promise<Step> {
    const guard = binding.precondition;
    if (!guard) return start();
    const callArgs = argsOf(step);
    const { result } = await this.run('PRECONDITION', guard, callArgs, null, this.at.nextFree());
    if (!result.ok) {
      await this.at.flush();
      throw new AttemptFailure(
        'TOOL_UNAVAILABLE',
        `the precondition ${guard.tool} of step ${step.sequence} could not be read: ${result.error}`,
      );
    }
    try {
      return await start();
    } catch (e) {
      if (!(e instanceof GraphQLRequestError) || e.code !== 'PRECONDITION_FAILED') throw e;
      const failed = String(e.details.failed ?? e.message);
      return { ...step, state: 'REJECTED', comment: factsChangedReason(failed) };
    }
  }

  /**
   * A write of unknown outcome asks its lookup. Found: the step is settled COMPLETED (reconciled). Not
   * found: sent again (a keyless write only once). The lookup failing: the attempt fails, outcome unknown.
   */
  async reconcile(binding: ToolBinding, step: Step): Promise<Step | 'send-again'> {
    const guard = binding.lookup!;
    const callArgs = argsOf(step);
    const { result, end } = await this.run(
      'LOOKUP',
      guard,
      callArgs,
      step.idempotencyKey,
      this.at.nextFree(),
    );
    if (!result.ok) {
      await this.at.flush();
      throw new AttemptFailure(
        'TOOL_OUTCOME_UNKNOWN',
        `${binding.ref} (step ${step.sequence}): its outcome is unknown and the lookup ${guard.tool} failed: ${result.error}`,
      );
    }
    if (checkGuard(guard.expression, result.response, callArgs).holds) {
      const r = await this.at.journalStep({
        sequence: step.sequence,
        kind: 'TOOL_CALL',
        toolRef: binding.ref,
        state: 'COMPLETED',
        request: step.request,
        response: result.response,
      });
      return r.step;
    }
    await this.at.flush();
    if (!step.idempotencyKey && this.at.lookedUpBefore(step.sequence, end.sequence)) {
      throw new AttemptFailure(
        'TOOL_OUTCOME_UNKNOWN',
        `${binding.ref} (step ${step.sequence}) was already sent again once after a lookup found nothing; its outcome is unknown`,
      );
    }
    return 'send-again';
  }
}

/** A TOOL_CALL step's arguments: its request is `{ callId, arguments }` (the worker wrote it). */
export function argsOf(step: Step): Record<string, unknown> {
  return (step.request as { arguments?: Record<string, unknown> } | null)?.arguments ?? {};
}

/** How a tool call that ran is journaled: COMPLETED with its answer, or FAILED with (the start of) its error. */
export function ended(result: ToolCallResult): {
  state: 'COMPLETED' | 'FAILED';
  response?: unknown;
  error?: string;
} {
  return result.ok
    ? { state: 'COMPLETED', response: result.response }
    : { state: 'FAILED', error: result.error.slice(0, 4000) };
}
