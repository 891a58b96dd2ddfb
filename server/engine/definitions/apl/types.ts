/**
 * The shapes of a deployment's validation. What a deployment freezes (processes, tool server specs,
 * bindings) lives in server/shared/types.ts, so that the database schema can type its columns with it.
 */
import type { FrozenProcess, ToolServerSpec } from '../../../shared/types.js';

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
  /** models with a price in force (deploy); a `budget_usd` node needs one for each of its models. Absent = not checked */
  pricedModels?: ReadonlySet<string> | null;
}

export type ValidationResult =
  | { ok: true; deployment: ValidatedDeployment }
  | { ok: false; errors: AplError[] };

export const DEFAULT_AGENT_TOPIC = 'abada:agent';
export const DEFAULT_MAX_ATTEMPTS = 3;

/** The version of the agent profile (`AgentWork`) an agent node's external task carries for its worker. */
export const AGENT_PROFILE_VERSION = 'abada.agent/v1';
