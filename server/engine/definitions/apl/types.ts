/**
 * The shapes of APL (the Abada Process Language) once parsed, validated and frozen.
 *
 * A deployment turns YAML documents into `ToolServerSpec`s and `FrozenProcess`es. A frozen process
 * carries, on every agent node, the `ToolBinding`s resolved at deployment time (url, transport, policy,
 * idempotency, approvers, SLA, credential name, schema pin): running instances read only these, never
 * the tool server as it is today.
 */

export type ToolPolicy = 'read' | 'write' | 'approval_required';
export type Idempotency = 'key' | 'none';
export type Transport = 'streamable-http' | 'stdio';

/** One deployment error: a code (ABADA-APL-…), where it is (path and 1-based line), what to do. */
export interface AplError {
  code: string;
  /** dotted path inside the document, e.g. `nodes[0].tools[2].ref`; prefixed by `documents[i].` */
  path: string;
  /** 1-based line in the submitted source, null when it cannot be located */
  line: number | null;
  column?: number | null;
  message: string;
}

/** A conditional approval rule: when `when` holds over the call's arguments, these levels decide in turn. */
export interface ApprovalRule {
  /** expression over the tool arguments, e.g. `amount > 1000` (see expression.ts) */
  when: string;
  /** each level is a list of candidate groups; a different person must decide each level */
  levels: string[][];
}

export interface ToolSpec {
  policy: ToolPolicy;
  idempotency: Idempotency;
  approvers: string[];
  approvalSlaHours: number | null;
  inputSchemaSha256: string | null;
  /** an approver may approve edited arguments */
  editable: boolean;
  /** argument paths (dotted, `items[].card`) hidden from the approver's view; the digest covers them */
  redact: string[];
  approvalRules: ApprovalRule[];
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

/** A tool as frozen on an agent node of a definition version. */
export interface ToolBinding {
  /** `server/tool`, or `delegate:<process-key>` */
  ref: string;
  server: string;
  tool: string;
  policy: ToolPolicy;
  idempotency: Idempotency;
  transport: Transport | 'delegate';
  url: string;
  command: string | null;
  args: string[];
  env: Record<string, string>;
  credential: string | null;
  credentialEnv: string | null;
  inputSchemaSha256: string | null;
  approvers: string[];
  approvalSlaHours: number | null;
  editable: boolean;
  redact: string[];
  approvalRules: ApprovalRule[];
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
}

export interface ServiceNode extends NodeBase {
  type: 'service';
  topic: string;
  priority: number;
  maxAttempts: number;
}

export interface UserTaskNode extends NodeBase {
  type: 'user_task';
  candidateGroups: string[];
}

export interface EndNode extends NodeBase {
  type: 'end';
}

export type ProcessNode = AgentNode | ServiceNode | UserTaskNode | EndNode;

export interface FrozenProcess {
  key: string;
  name: string | null;
  variables: Record<string, VariableSpec>;
  /** variables returned to a delegating parent when this process ends (empty = all variables) */
  outputs: string[];
  start: string;
  nodes: ProcessNode[];
}

/** What a valid deployment yields; the engine stores it (tool servers upserted, a new version per process). */
export interface ValidatedDeployment {
  toolServers: ToolServerSpec[];
  processes: FrozenProcess[];
}

/** What the validator needs to know beyond the source itself. */
export interface ValidationContext {
  /** tool servers already deployed in the project (the source's own ToolServer documents override these) */
  toolServers: Map<string, ToolServerSpec>;
  /** process keys already deployed in the project (targets of `delegate:<key>`) */
  processKeys: Set<string>;
  /** ABADA_AGENT_ALLOWED_MODELS; null = no restriction */
  allowedModels: string[] | null;
  /** ABADA_AGENT_ALLOWED_TOOLS (server names or server/tool refs); null = no restriction */
  allowedTools: string[] | null;
}

export type ValidationResult =
  | { ok: true; deployment: ValidatedDeployment }
  | { ok: false; errors: AplError[] };

export const DEFAULT_AGENT_TOPIC = 'abada:agent';
export const DEFAULT_MAX_ATTEMPTS = 3;
