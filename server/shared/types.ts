/**
 * The JSON the database stores (`server/db` types its jsonb columns with these): what a deployment
 * freezes, what an agent node's task carries for its worker (`AgentWork`), smaller documents. Every agent
 * node of a frozen process carries its `ToolBinding`s: running instances never read today's tool server.
 */

export type ToolPolicy = 'read' | 'write' | 'approval_required';
export type Idempotency = 'key' | 'none';
export type Transport = 'streamable-http' | 'stdio';
export type Risk = 'low' | 'medium' | 'high';

/**
 * A read the engine asks for around a write (SPEC §11): the read tool (bound on the same node) and its
 * arguments, whose text leaves are templates over the call's arguments (template.ts).
 */
interface GuardRead {
  tool: string;
  arguments: Record<string, unknown>;
}

/** What an approval shows and how long it holds (SPEC §11); absent on older definitions: `bindingPolicy`. */
export interface ApprovalSettings {
  /** template over the call's arguments, e.g. "Refund ${amount} to order ${orderId}" */
  impact?: string | null;
  /** default true */
  reversible?: boolean;
  /** default medium */
  risk?: Risk;
  /** an APPROVED call must start within this many minutes (default 1440) */
  approvalValidMinutes?: number;
  /** a PENDING approval with no decision by then is EXPIRED (default null: never) */
  approvalTimeoutHours?: number | null;
  /** re-read before an approved write starts; `expect` (the `approval.when` language) must hold */
  precondition?: (GuardRead & { expect: string }) | null;
  /** settles a write whose outcome is unknown; `found` true = the write took effect */
  lookup?: (GuardRead & { found: string }) | null;
  /** paths in the tool's answers hidden from evidence (an approval's basis and facts) */
  redactResult?: string[];
}

/**
 * A rule over a call's arguments (SPEC §14.1): when `when` holds, exactly one outcome applies — these
 * `levels` decide in turn, the call runs with no person (`auto`), or it is refused (`deny`).
 */
export interface ApprovalRule {
  /** expression over the tool arguments, e.g. `amount > 1000` (see expression.ts) */
  when: string;
  /** each level is a list of candidate groups; a different person must decide each level (empty: auto or deny) */
  levels: string[][];
  /** the call runs without a person (approval_required tools only) */
  auto?: true;
  /** the call is refused with this reason */
  deny?: string;
}

/** A deterministic check of a call's arguments before anyone is asked (SPEC §14.2). */
export interface ArgumentCheck {
  /** must hold over the arguments (the `approval.when` language) */
  expect: string;
  /** what the model (or the approver who edited) reads when it does not */
  message: string;
}

export interface ToolSpec extends ApprovalSettings {
  policy: ToolPolicy;
  idempotency: Idempotency;
  approvers: string[];
  approvalSlaHours: number | null;
  inputSchemaSha256: string | null;
  /** an approver may approve edited arguments */
  editable: boolean;
  /** argument paths (dotted, `items[].card`) hidden from the approver's view; the digest covers them */
  redact: string[];
  /** on a binding: the tool's rules, then the node's (`ApprovalRule.index` counts in this merged list) */
  approvalRules: ApprovalRule[];
  /** a write's checks of every call, in order (the tool's, then the node's); absent on older definitions */
  validate?: ArgumentCheck[];
  /** JSON Schema the arguments must satisfy (the tool's and the node's, as allOf) */
  inputSchema?: Record<string, unknown> | null;
}

export interface ToolServerSpec {
  name: string;
  transport: Transport;
  url: string | null;
  command: string | null;
  args: string[];
  env: Record<string, string>;
  credential: string | null;
  /** for stdio servers: the environment variable the credential is passed in */
  credentialEnv: string | null;
  tools: Record<string, ToolSpec>;
}

/** A tool as frozen on an agent node: its spec as the node narrowed it, and its server. */
export interface ToolBinding
  extends ToolSpec,
    Pick<ToolServerSpec, 'command' | 'args' | 'env' | 'credential' | 'credentialEnv'> {
  /** `server/tool`, or `delegate:<process-key>` */
  ref: string;
  server: string;
  tool: string;
  transport: Transport | 'delegate';
  url: string;
  /** the node dropped the tool's `auto` rules: every call a person would decide goes to people */
  dropAuto?: boolean;
}

export type VariableType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

export interface VariableSpec {
  type: VariableType;
  required: boolean;
}

export interface AgentLimits {
  maxTurns: number | null;
  maxTokensTotal: number | null;
  budgetUsd: number | null;
}

interface NodeBase {
  id: string;
  /** next node id; null only on `end` */
  next: string | null;
}

export interface AgentNode extends NodeBase {
  type: 'agent';
  topic: string;
  priority: number;
  model: string;
  fallbackModels: string[];
  prompt: string;
  /** input name → template (`${var}` interpolated from instance variables at task creation) */
  inputs: Record<string, string>;
  bindings: ToolBinding[];
  resultVariable: string;
  outputSchema: Record<string, unknown> | null;
  confidenceThreshold: number | null;
  maxAttempts: number;
  limits: AgentLimits;
  onInvalidOutput: string | null;
  onLowConfidence: string | null;
  /** paths in the node's inputs hidden from evidence (an approval's basis); absent on older definitions */
  redactInputs?: string[];
  /** this many minutes after the node is entered, its work is retired and the token moves to `onTimeout` */
  timeoutMinutes?: number | null;
  onTimeout?: string | null;
  /** where the token goes instead of an incident when the node's task exhausts its attempts */
  onFailure?: string | null;
}

export type ProcessNode =
  | AgentNode
  | (NodeBase & { type: 'service'; topic: string; priority: number; maxAttempts: number })
  | (NodeBase & { type: 'user_task'; candidateGroups: string[] })
  | (NodeBase & { type: 'end' });

export interface FrozenProcess {
  key: string;
  name: string | null;
  variables: Record<string, VariableSpec>;
  /** variables returned to a delegating parent when this process ends (empty = all variables) */
  outputs: string[];
  start: string;
  nodes: ProcessNode[];
}

/**
 * The agent profile: what an agent node's external task carries for its worker (model, prompt, inputs,
 * frozen tool bindings, limits, output contract). Frozen when the task is created, versioned.
 */
export interface AgentWork {
  profileVersion: string;
  model: string;
  fallbackModels: string[];
  prompt: string;
  inputs: Record<string, unknown>;
  resultVariable: string;
  outputSchema: Record<string, unknown> | null;
  confidenceThreshold: number | null;
  limits: AgentLimits;
  toolBindings: ToolBinding[];
  onInvalidOutput: string | null;
  onLowConfidence: string | null;
}

/** What a worker reports about an attempt; only these fields are kept (never a prompt). */
export interface AttemptMetadata {
  model?: string | null;
  provider?: string | null;
  attempt?: number | null;
  durationMs?: number | null;
  tools?: string[] | null;
  resultVariable?: string | null;
  promptHash?: string | null;
  confidence?: number | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  /** a failed attempt's errorType (failures only) */
  errorType?: string | null;
}

/** The tokens of a model call as the engine counts them (total never below input + output). */
export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** What a re-sent completeTask / failTask gets back: the state its first report left the task in. */
export interface TaskReportOutcome {
  state: string;
  errorType?: string;
}

/** How an incident was resolved: who, why, and for TOOL_OUTCOME_UNKNOWN whether the call took effect. */
export interface IncidentResolution {
  comment: string;
  by: string;
  happened?: boolean | null;
}

/** The body of a webhook POST (docs/webhooks.md); receivers dedupe on `id`. */
export interface WebhookPayload {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/** Instance variables, history event data, job payloads: JSON objects of no fixed shape. */
export type JsonObject = Record<string, unknown>;
