/**
 * The tool steps of one lease: each tool call the model asks for is one journaled TOOL_CALL, moved along
 * its life (proposed, approved, started, ended) or replayed from the journal as far as a lease got.
 */
import { AttemptFailure, type Attempt, LetGo } from './attempt.js';
import {
  type FunctionTool,
  type ToolCall,
  type ToolSchema,
  resultText,
  toolFunctions,
  toolStepContent,
} from './conversation.js';
import {
  backoffMs,
  GraphQLRequestError,
  type JournalResult,
  sleep,
  type Step,
  type ToolBinding,
} from './graphql.js';
import { argsOf, ended, GuardReads } from './guards.js';
import { type ToolCallResult, ToolOutcomeUnknownError, type ToolSessions } from './mcp.js';

type EndedStep = Parameters<typeof toolStepContent>[0] & Pick<Step, 'sequence'>;

/** A write's answer was lost and its binding declares a lookup: ask it before sending again. */
class LostAnswer extends Error {}

/** How many times one lease sends a write again after its lookup found nothing. */
const MAX_SENDS_AFTER_LOOKUP = 2;

export class ToolSteps {
  private byName = new Map<string, ToolBinding>();
  private bindings: ToolBinding[] = [];
  private schemas = new Map<string, ToolSchema>();
  private readonly guards: GuardReads;
  /** Tool refs whose step ended (the task's metadata). */
  readonly used = new Set<string>();

  constructor(
    private readonly at: Attempt,
    private readonly sessions: ToolSessions,
  ) {
    this.guards = new GuardReads(
      at,
      () => this.bindings,
      (b, args) => this.invoke(b, args, null),
    );
  }

  /** Checks the bound tools' contracts; returns the functions offered to the model. */
  async bind(bindings: ToolBinding[]): Promise<FunctionTool[]> {
    const schemas = await this.sessions.check(bindings);
    const { tools, byName } = toolFunctions(bindings, schemas);
    this.byName = byName;
    this.bindings = bindings;
    this.schemas = schemas;
    return tools;
  }

  /** Runs (or replays from the journal) one tool call; returns the tool message content. */
  async call(call: ToolCall): Promise<string> {
    const { at } = this;
    const name = call.function.name;
    const binding = this.byName.get(name);
    // Refusals that need no step: a pure function of the assistant message, so a rebuild repeats them.
    if (!binding)
      return `Error: there is no function named ${name}. Use one of: ${[...this.byName.keys()].join(', ')}.`;
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      return `Error: the arguments of ${name} are not valid JSON.`;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args))
      return `Error: the arguments of ${name} must be a JSON object.`;
    const request = { callId: call.id, arguments: args as Record<string, unknown> };
    const existing = at.existing();
    if (existing) {
      if (existing.kind !== 'TOOL_CALL' || existing.toolRef !== binding.ref) {
        throw new AttemptFailure(
          'JOURNAL_CONFLICT',
          `step ${at.seq} is ${existing.kind} ${existing.toolRef ?? ''}, the conversation asks for ${binding.ref}`,
        );
      }
      return this.advance(binding, existing, null, false);
    }
    if (binding.policy === 'READ') {
      const result = await this.invoke(binding, args as Record<string, unknown>, null);
      // a read is journaled once, after it ran: its end alone, as the engine will store the step
      const read = this.hold({ sequence: at.seq, toolRef: binding.ref, request }, result, true);
      return this.done(binding, { ...read, reused: false, approvalId: null, comment: null });
    }
    const proposal = binding.policy === 'APPROVAL_REQUIRED';
    // the precondition at proposal time: its answer is what the approver sees as the facts
    if (proposal) await this.guards.beforeProposal(binding, request.arguments);
    let r: JournalResult;
    try {
      r = await at.journalStep({
        sequence: at.seq,
        kind: 'TOOL_CALL',
        toolRef: binding.ref,
        state: proposal ? 'PROPOSED' : 'STARTED',
        request,
        ...(proposal ? { toolDescription: this.schemas.get(binding.ref)?.description ?? null } : {}),
      });
    } catch (e) {
      // The engine refused the call itself (a delegation's inputs, its depth): tell the model, no step.
      if (e instanceof GraphQLRequestError && (e.code === 'VALIDATION_FAILED' || e.code === 'LIMIT_EXCEEDED'))
        return `Error: ${e.message}`;
      throw e;
    }
    return this.advance(binding, r.step, r, true);
  }

  /** Moves a tool step along its life until it ends (→ tool message) or the task must be let go. */
  private async advance(
    binding: ToolBinding,
    first: Step,
    answer: JournalResult | null,
    fresh: boolean,
  ): Promise<string> {
    const { at } = this;
    let step = first;
    let taskState = answer?.taskState ?? 'LEASED';
    let sentAgain = 0;
    for (;;) {
      const where = { sequence: step.sequence, toolRef: binding.ref };
      switch (step.state) {
        case 'COMPLETED':
        case 'FAILED':
        case 'REJECTED':
        case 'OUTCOME_UNKNOWN':
          return this.done(binding, step);
        case 'PROPOSED':
          at.log.info({ event: 'tool.proposed', ...where }, 'waiting for approval');
          throw new LetGo('parked', `step ${step.sequence} waits for approval`);
        case 'APPROVED': {
          const r = await this.startApproved(binding, step);
          step = r.step;
          taskState = r.taskState ?? taskState;
          fresh = true;
          continue;
        }
        case 'STARTED': {
          if (binding.transport === 'delegate' || taskState === 'AWAITING_CHILD')
            throw new LetGo('parked', `step ${step.sequence} waits for its child process`);
          const sent = await this.send(binding, step, fresh);
          if (sent === 'lost') {
            if (++sentAgain > MAX_SENDS_AFTER_LOOKUP)
              throw new AttemptFailure('TOOL_UNAVAILABLE', `${binding.ref} keeps losing its answers`);
            fresh = false; // ask its lookup, as a later lease would
            continue;
          }
          step = sent;
        }
      }
    }
  }

  /** A tool step that ended: its tool message, the cursor past it. */
  private done(binding: ToolBinding, step: EndedStep): string {
    const content = toolStepContent(step);
    if (content === null) throw new LetGo('let-go', `step ${step.sequence} waits for a person`);
    this.used.add(binding.ref);
    const { sequence, state, reused } = step;
    this.at.log.info({ event: 'tool.done', sequence, toolRef: binding.ref, state, reused }, 'tool step');
    this.at.next();
    return content;
  }

  /** Starts exactly the approved request (maybe edited), right after its precondition is read again. */
  private async startApproved(binding: ToolBinding, approved: Step) {
    let taskState: JournalResult['taskState'] | null = null;
    const step = await this.guards.startApproved(binding, approved, async () => {
      const r = await this.at
        .journalStep({
          sequence: approved.sequence,
          kind: 'TOOL_CALL',
          toolRef: binding.ref,
          state: 'STARTED',
          request: approved.request,
        })
        .catch((e: unknown) => {
          // The approval no longer stands (expired, or a decider's authority lapsed): the engine
          // asked people again and took the task back. Let it go; it returns when they decide.
          if (
            e instanceof GraphQLRequestError &&
            (e.code === 'APPROVAL_EXPIRED' || e.code === 'APPROVAL_REQUIRED')
          )
            throw new LetGo('parked', `step ${approved.sequence}: ${e.message}`);
          throw e;
        });
      taskState = r.taskState;
      return r.step;
    });
    return { step, taskState };
  }

  /** Sends a started call (found in flight: a write asks its lookup first; a keyless one is not re-sent). */
  private async send(binding: ToolBinding, step: Step, fresh: boolean): Promise<Step | 'lost'> {
    const where = { sequence: step.sequence, toolRef: binding.ref };
    if (!fresh && binding.lookup && binding.policy !== 'READ') {
      // Found in flight: settle it by its lookup before anything is sent again (SPEC §11).
      const settled = await this.guards.reconcile(binding, step);
      if (settled !== 'send-again') return settled;
      fresh = true;
    }
    const key = step.idempotencyKey;
    if (!key && !fresh && binding.policy !== 'READ') {
      // A keyless write found in flight is never re-sent: a person states what happened.
      throw new AttemptFailure(
        'TOOL_OUTCOME_UNKNOWN',
        `${binding.ref} (step ${step.sequence}) was in flight`,
      );
    }
    if (key && !fresh)
      this.at.log.info({ event: 'tool.resend', ...where }, 're-sending a started write with its key');
    const args = argsOf(step);
    try {
      return this.hold(step, await this.invoke(binding, args, key), false);
    } catch (e) {
      if (e instanceof LostAnswer) return 'lost';
      throw e;
    }
  }

  /** Holds the step's end back; returns the step as the engine will store it (as a rebuild reads it). */
  private hold<S extends Pick<Step, 'sequence' | 'toolRef' | 'request'>>(
    step: S,
    result: ToolCallResult,
    lossless: boolean,
  ) {
    const end = ended(result);
    const { sequence, toolRef, request } = step;
    this.at.end({ sequence, kind: 'TOOL_CALL', toolRef: toolRef ?? undefined, request, ...end }, lossless);
    return { ...step, state: end.state, response: end.response ?? null, error: end.error || null };
  }

  /**
   * Calls the tool. A call without a definite answer (timeout, HTTP 5xx, connection dropped) is tried
   * again with backoff when safe (a read, or a keyed write under its key), up to TOOL_TRIES times and never
   * past the lease's local deadline; a keyless write is never re-sent. Each try waits at most the tool
   * timeout, so a stuck server holds this task only.
   */
  private async invoke(
    binding: ToolBinding,
    args: Record<string, unknown>,
    key: string | null,
  ): Promise<ToolCallResult> {
    const { at } = this;
    // a write goes out only when every earlier end is journaled; a read may leave answers held (attempt.ts)
    if (!(binding.policy === 'READ' && at.readMayWait)) await at.flush();
    const t0 = Date.now();
    for (let i = 0; ; i++) {
      await at.beforeSending();
      try {
        const result = await this.sessions.call(binding, args, key);
        const { ok } = result;
        const called = { sequence: at.seq, toolRef: binding.ref, ok, tries: i + 1, ms: Date.now() - t0 };
        at.log.info({ event: 'tool.called', ...called }, 'tool call');
        return result.ok ? { ...result, response: fitForJournal(result.response) } : result;
      } catch (e) {
        at.checkLease();
        if (!(e instanceof ToolOutcomeUnknownError)) throw e;
        at.log.warn({ event: 'tool.unknown', sequence: at.seq, toolRef: binding.ref, try: i + 1 }, e.message);
        const read = binding.policy === 'READ';
        // A write whose binding declares a lookup: the lookup settles it before anything is sent again.
        if (!read && binding.lookup) throw new LostAnswer(e.message);
        // Keyless: the engine marks the step OUTCOME_UNKNOWN for a person.
        if (!read && !key) throw new AttemptFailure('TOOL_OUTCOME_UNKNOWN', e.message);
        if (i + 1 >= TOOL_TRIES) {
          if (read) return { ok: false as const, error: e.message };
          // Keyed: the next attempt re-sends it under the same key.
          throw new AttemptFailure('TOOL_UNAVAILABLE', e.message);
        }
        await sleep(backoffMs(i, 500, 4000), at.lease.signal);
      }
    }
  }
}

/** Tries of one call whose outcome stayed unknown (reads and keyed writes only). */
export const TOOL_TRIES = 3;

/**
 * The engine refuses step payloads over 256 KiB (PAYLOAD_TOO_LARGE): a longer answer is cut before it is
 * journaled, so a write that succeeded is recorded as such and every rebuild reads the same cut answer.
 */
export const MAX_RESULT_CHARS = 192 * 1024;

export function fitForJournal(response: unknown): unknown {
  const text = resultText(response);
  if (text.length <= MAX_RESULT_CHARS) return response;
  return {
    truncated: true,
    originalChars: text.length,
    text: `${text.slice(0, MAX_RESULT_CHARS - 200)}… [truncated: the tool answered ${text.length} characters]`,
  };
}
