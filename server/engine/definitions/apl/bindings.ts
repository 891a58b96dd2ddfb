/** Resolves an agent node's `tools` into frozen `ToolBinding`s, applying the node's narrowing. */
import { APL, describe, didYouMean, joinIndex, joinKey } from './errors.js';
import { isObj, type Reader } from './fields.js';
import { applySettings, type BindingContext, checkNodeGuards, GUARDS, type PlacedBinding } from './guards.js';
import { withDefaults } from './policy.js';
import { type EntryChecks, placeEntryChecks, readEntryChecks, RULE_FIELDS } from './rules.js';
import { readSettings, SETTING_FIELDS, TOOL_REF, type WrittenSettings } from './settings.js';
import { POLICIES } from './toolserver.js';
import type { ToolBinding, ToolPolicy } from '../../../shared/types.js';

export const PROCESS_KEY = /^[a-z0-9][a-z0-9-_.]*$/;

/** One `tools` entry as written on the node: the ref and the node's overrides. */
interface ToolEntry {
  ref: string;
  /** the entry's path */
  ep: string;
  /** where errors about the ref go: the entry itself, or its `ref` field */
  refPath: string;
  approvers: string[] | null;
  policy: ToolPolicy | null;
  sla: number | null;
  settings: WrittenSettings;
  /** deny rules, validate, input_schema and drop_auto the node adds */
  checks: EntryChecks | null;
}

const ENTRY_FIELDS = [
  ...['ref', 'approvers', 'policy', 'approval_sla_hours', 'drop_auto'],
  ...RULE_FIELDS,
  ...SETTING_FIELDS,
];
const RANK: Record<ToolPolicy, number> = { read: 0, write: 1, approval_required: 2 };

export function resolveBindings(r: Reader, tools: unknown, nodePath: string, ctx: BindingContext) {
  const out: ToolBinding[] = [];
  if (tools == null) return out;
  const tp = joinKey(nodePath, 'tools');
  if (!Array.isArray(tools)) {
    r.err(APL.DOC_FIELD, tp, `tools must be a list of refs like crm/get_customer, not ${describe(tools)}.`);
    return out;
  }
  const seen = new Set<string>();
  const placed: PlacedBinding[] = [];
  const failedRefs = new Set<string>();
  tools.forEach((value, i) => {
    const entry = readEntry(r, value, joinIndex(tp, i));
    if (!entry) {
      if (isObj(value) && typeof value.ref === 'string') failedRefs.add(value.ref.trim());
      return;
    }
    if (seen.has(entry.ref)) {
      r.err(
        APL.TOOL_DUPLICATE_REF,
        entry.refPath,
        `${entry.ref} is listed twice on this node. Keep one entry.`,
      );
      return;
    }
    seen.add(entry.ref);
    const base = entry.ref.startsWith('delegate:')
      ? resolveDelegate(r, entry, ctx)
      : resolveServerTool(r, entry, ctx);
    const narrowed = base && applyOverrides(r, base, entry);
    const settled = narrowed && applySettings(r, narrowed, entry.settings, entry.ep);
    const binding = settled && addEntryChecks(r, settled, entry);
    if (!binding) {
      failedRefs.add(entry.ref);
      return;
    }
    out.push(binding);
    const own = new Set(GUARDS.filter((g) => entry.settings[g] !== undefined));
    placed.push({ binding, ep: entry.ep, refPath: entry.refPath, own });
  });
  checkNodeGuards(r, placed, failedRefs, ctx);
  return out;
}

/** Reads an entry's shape: a bare ref string, or `{ ref, approvers, policy, approval_sla_hours }`. */
function readEntry(r: Reader, entry: unknown, ep: string): ToolEntry | null {
  if (typeof entry === 'string') {
    const ref = entry.trim();
    return { ref, ep, refPath: ep, approvers: null, policy: null, sla: null, settings: {}, checks: null };
  }
  if (!isObj(entry)) {
    return r.err(
      APL.DOC_FIELD,
      ep,
      `A tool must be a ref like crm/get_customer or { ref: crm/refund, approvers: [...] }, not ${describe(entry)}.`,
    );
  }
  const what = 'a tool ref';
  r.keys(entry, ep, ENTRY_FIELDS, what);
  const ref = r.str(entry, 'ref', ep, what, {
    required: true,
    help: 'server/tool or delegate:<process-key>.',
  });
  if (ref === null) return null;
  const approvers = r.strList(entry, 'approvers', ep, what);
  const sla = r.num(entry, 'approval_sla_hours', ep, what, { positive: true });
  const policy = r.oneOf(entry, 'policy', ep, POLICIES);
  if (policy === null) return null;
  const settings = readSettings(r, entry, ep, what);
  const checks = readEntryChecks(r, entry, ep);
  const refPath = joinKey(ep, 'ref');
  return { ref: ref.trim(), ep, refPath, approvers, policy: policy ?? null, sla, settings, checks };
}

/** `delegate:<process-key>`: the key must be deployed or defined in this source. */
function resolveDelegate(r: Reader, { ref, refPath }: ToolEntry, ctx: BindingContext): ToolBinding | null {
  const key = ref.slice('delegate:'.length);
  if (!PROCESS_KEY.test(key)) {
    return r.err(
      APL.TOOL_BAD_REF,
      refPath,
      `${JSON.stringify(ref)} is malformed: write delegate:<process-key>, e.g. delegate:kyc-check.`,
    );
  }
  if (!ctx.processKeys.has(key)) {
    if (ctx.brokenNames?.has(`process:${key}`)) return null;
    return r.err(
      APL.DELEGATE_UNKNOWN,
      refPath,
      `No process "${key}" is deployed or defined in this source. Deploy it first or add it here.${didYouMean(key, ctx.processKeys)}`,
    );
  }
  return {
    ref,
    server: 'delegate',
    tool: key,
    policy: 'write',
    idempotency: 'key',
    transport: 'delegate',
    url: '',
    command: null,
    args: [],
    env: {},
    credential: null,
    credentialEnv: null,
    inputSchemaSha256: null,
    approvers: [],
    approvalSlaHours: null,
    editable: false,
    redact: [],
    approvalRules: [],
    validate: [],
    inputSchema: null,
    ...withDefaults({}),
  };
}

/** `server/tool`: resolved against the deployed servers (and the source's own), within the allow-list. */
function resolveServerTool(r: Reader, { ref, refPath }: ToolEntry, ctx: BindingContext): ToolBinding | null {
  const m = TOOL_REF.exec(ref);
  if (!m) {
    return r.err(
      APL.TOOL_BAD_REF,
      refPath,
      `${JSON.stringify(ref)} is not a tool ref: write server/tool (e.g. crm/get_customer) or delegate:<process-key>.`,
    );
  }
  const [, serverName, toolName] = m;
  const server = ctx.servers.get(serverName);
  if (!server) {
    if (ctx.brokenNames?.has(`server:${serverName}`)) return null;
    return r.err(
      APL.TOOL_UNKNOWN_SERVER,
      refPath,
      `Unknown tool server "${serverName}". Deploy a ToolServer named ${serverName} or fix the ref.${didYouMean(serverName, ctx.servers.keys())}`,
    );
  }
  const tool = Object.hasOwn(server.tools, toolName) ? server.tools[toolName] : undefined;
  if (!tool) {
    const names = Object.keys(server.tools);
    return r.err(
      APL.TOOL_UNKNOWN_TOOL,
      refPath,
      `Tool server "${serverName}" has no tool "${toolName}" (it has: ${names.join(', ') || 'none'}).${didYouMean(toolName, names)}`,
    );
  }
  const allowed = ctx.allowedTools;
  // an allow-list entry is a server name or a `server/tool` ref
  if (allowed !== null && !allowed.includes(serverName) && !allowed.includes(ref)) {
    return r.err(
      APL.TOOL_NOT_ALLOWED,
      refPath,
      `${ref} is outside ABADA_AGENT_ALLOWED_TOOLS. Use an allowed server or ask an operator to allow ${serverName}.`,
    );
  }
  return {
    ref,
    server: serverName,
    tool: toolName,
    policy: tool.policy,
    idempotency: tool.idempotency,
    transport: server.transport,
    url: server.url ?? '',
    command: server.command,
    args: [...server.args],
    env: { ...server.env },
    credential: server.credential,
    credentialEnv: server.credentialEnv,
    inputSchemaSha256: tool.inputSchemaSha256,
    approvers: [...tool.approvers],
    approvalSlaHours: tool.approvalSlaHours,
    editable: tool.editable,
    redact: [...tool.redact],
    approvalRules: structuredClone(tool.approvalRules),
    validate: structuredClone(tool.validate ?? []),
    inputSchema: structuredClone(tool.inputSchema ?? null),
    ...withDefaults(structuredClone(tool)),
  };
}

/** Applies the node's overrides: a policy may only tighten; approvers and the SLA replace the server's. */
function applyOverrides(r: Reader, base: ToolBinding, entry: ToolEntry): ToolBinding | null {
  const { ref, ep, refPath, policy } = entry;
  if (policy !== null && RANK[policy] < RANK[base.policy]) {
    return r.err(
      APL.TOOL_LOOSENED,
      joinKey(ep, 'policy'),
      `${ref} is ${base.policy} on its server; a node may keep or tighten a policy, not loosen it to ${policy}. Remove the override or use ${base.policy}.`,
    );
  }
  const effective = policy ?? base.policy;
  const finalApprovers = entry.approvers ?? base.approvers;
  // Conditional rules add levels only when they match; a call no rule matches goes to the approvers,
  // so they must exist even when rules do (otherwise nobody could ever decide that call).
  if (effective === 'approval_required' && finalApprovers.length === 0) {
    return r.err(
      APL.TOOL_NO_APPROVERS,
      refPath,
      base.approvalRules.length > 0
        ? `${ref} has conditional approval rules but no approvers for calls that match none of them. Add approvers: [group].`
        : `${ref} requires approval but no approver group is named on the server's tool or on this node. Add approvers: [group].`,
    );
  }
  return {
    ...base,
    policy: effective,
    approvers: [...finalApprovers],
    approvalSlaHours: entry.sla ?? base.approvalSlaHours,
  };
}

/**
 * The node's checks join the tool's: its deny rules after the tool's rules (so `ApprovalRule.index`
 * counts the tool's first), its validate after the tool's, both schemas must hold, and drop_auto.
 */
function addEntryChecks(r: Reader, b: ToolBinding, entry: ToolEntry): ToolBinding | null {
  if (!entry.checks) return b;
  const before = r.sink.errors.length;
  const c = placeEntryChecks(r, entry.checks, entry.ep, entry.ref, b.policy);
  if (r.sink.errors.length > before) return null;
  return {
    ...b,
    approvalRules: [...b.approvalRules, ...c.rules],
    validate: [...(b.validate ?? []), ...c.validate],
    inputSchema:
      b.inputSchema && c.inputSchema
        ? { allOf: [b.inputSchema, c.inputSchema] }
        : (b.inputSchema ?? c.inputSchema ?? null),
    ...(c.dropAuto ? { dropAuto: true } : {}),
  };
}
