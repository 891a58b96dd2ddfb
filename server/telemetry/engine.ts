/**
 * The engine's spans. Each process instance is one trace: its root span is written when the instance
 * starts (its traceparent kept on the instance row and handed to workers with each task); a task claimed
 * and an approval decided are spans in it. GraphQL commands continue the caller's traceparent (trace.ts).
 */
import { type Attributes, context, type Link, SpanKind, trace } from '@opentelemetry/api';
import { ABADA } from './attributes.js';
import { contextOf, traceparentOf } from './context.js';
import { tracer, tracing } from './state.js';

/** A link to the caller's span (the request that started the instance, claimed the task…), if any. */
function callerLinks(): Link[] {
  const caller = trace.getSpanContext(context.active());
  return caller && trace.isSpanContextValid(caller) ? [{ context: caller }] : [];
}

/**
 * The root of a new instance's trace, or null when tracing is off. A new trace rather than the caller's:
 * an instance outlives the request that started it by hours or days, so the request is a link.
 */
export function startInstanceTrace(key: string, version: number) {
  if (!tracing.on) return null;
  const span = tracer().startSpan(`start_process ${key}`, {
    kind: SpanKind.INTERNAL,
    root: true,
    links: callerLinks(),
    attributes: { [ABADA.processKey]: key, [ABADA.processVersion]: version },
  });
  return {
    traceparent: traceparentOf(span),
    end(instanceId: string) {
      span.setAttribute(ABADA.instanceId, instanceId);
      span.end();
    },
  };
}

export interface ClaimedTask {
  id: string;
  attempt: number;
  processInstanceId: string;
  traceparent: string | null;
}

/** A span from `startTime` to now, in the trace `traceparent` names. */
function record(
  name: string,
  traceparent: string | null,
  startTime: Date,
  links: Link[],
  attributes: Attributes,
) {
  tracer()
    .startSpan(name, { kind: SpanKind.INTERNAL, startTime, links, attributes }, contextOf(traceparent))
    .end();
}

/** A `claim` span per task handed to a worker, in its instance's trace (from `startTime` to now). */
export function traceClaims(workerId: string, tasks: readonly ClaimedTask[], startTime: Date): void {
  if (!tracing.on || tasks.length === 0) return;
  const links = callerLinks();
  for (const t of tasks) {
    record('claim', t.traceparent, startTime, links, {
      [ABADA.command]: 'fetchAndLock',
      [ABADA.taskId]: t.id,
      [ABADA.attempt]: t.attempt,
      [ABADA.instanceId]: t.processInstanceId,
      [ABADA.workerId]: workerId,
    });
  }
}

export interface ApprovalWait {
  approvalId: string;
  taskId: string;
  processInstanceId: string;
  toolRef: string;
  sequence: number;
  /** when the approval opened (the wait's start) */
  openedAt: Date;
  level: number;
  decidedBy: string;
  decision: string;
  /** the approval's state after the decision (APPROVED, REJECTED, or PENDING at the next level) */
  state: string;
}

/**
 * An approval's wait, from its opening to this decision, with who decided what: written when the decision
 * commits, with its real start time, since a wait spans processes and days.
 */
export function traceApprovalWait(traceparent: string | null, w: ApprovalWait): void {
  if (!tracing.on) return;
  record(`approval_wait ${w.toolRef}`, traceparent, w.openedAt, callerLinks(), {
    [ABADA.approvalId]: w.approvalId,
    [ABADA.taskId]: w.taskId,
    [ABADA.instanceId]: w.processInstanceId,
    [ABADA.toolRef]: w.toolRef,
    [ABADA.sequence]: w.sequence,
    [ABADA.approvalLevel]: w.level,
    [ABADA.decidedBy]: w.decidedBy,
    [ABADA.decision]: w.decision,
    [ABADA.approvalState]: w.state,
  });
}

/** Whether the engine should spend a read on an instance's trace context (only while tracing). */
export function tracingOn(): boolean {
  return tracing.on;
}
