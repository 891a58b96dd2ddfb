/** The approval settings of a tool and of a node's binding, checked where they meet (SPEC §11). */
import { APL, didYouMean, joinKey } from './errors.js';
import type { Reader } from './fields.js';
import { RISK_RANK, withDefaults } from './policy.js';
import { TOOL_REF, type WrittenSettings } from './settings.js';
import type { Idempotency, ToolBinding, ToolPolicy, ToolServerSpec } from '../../../shared/types.js';

/** What resolving a node's tool refs reads: the servers, the process keys, the allowed tools. */
export interface BindingContext {
  servers: Map<string, ToolServerSpec>;
  /** deployed process keys plus those defined in the source */
  processKeys: Set<string>;
  allowedTools: string[] | null;
  /** names defined by documents that failed to parse: refs to them are not reported again */
  brokenNames?: Set<string>;
  /** servers defined by this source's own documents (their guards are checked there) */
  sourceServers?: Set<string>;
}

type Guard = 'precondition' | 'lookup';
export const GUARDS: readonly Guard[] = ['precondition', 'lookup'];

/** Drops (and reports) a guard its tool's policy or idempotency does not allow. */
export function placeGuards(
  r: Reader,
  s: WrittenSettings,
  p: string,
  name: string,
  policy: ToolPolicy,
  idempotency: Idempotency,
): void {
  if (s.precondition && policy !== 'approval_required') {
    r.err(
      APL.GUARD_NOT_WRITE,
      joinKey(p, 'precondition'),
      `${name} is ${policy}: a precondition guards an approved call, so it applies only to approval_required tools. Remove it or require approval.`,
    );
    delete s.precondition;
  }
  if (s.lookup && policy === 'read') {
    r.err(
      APL.GUARD_NOT_WRITE,
      joinKey(p, 'lookup'),
      `${name} is a read tool: a lookup settles a write whose outcome is unknown. Remove it.`,
    );
    delete s.lookup;
  }
  if (s.lookup && s.lookupKeyPath && idempotency === 'none') {
    r.err(
      APL.GUARD_KEYLESS,
      s.lookupKeyPath,
      `${name} has idempotency: none, so its calls carry no idempotency key. Look the write up by its arguments, or declare idempotency: key.`,
    );
    delete s.lookup;
  }
}

/** The node's settings over the tool's: only tightening; the guards placed by the effective policy. */
export function applySettings(r: Reader, base: ToolBinding, s: WrittenSettings, ep: string) {
  const b = withDefaults(base);
  const { ref } = base;
  const before = r.sink.errors.length;
  const loosened = (field: string, why: string) =>
    r.err(
      APL.TOOL_SETTING_LOOSENED,
      joinKey(ep, field),
      `${ref}: ${why} A node may only tighten a tool's approval settings. Remove the override or tighten it.`,
    );
  if (s.risk !== undefined && RISK_RANK[s.risk] < RISK_RANK[b.risk])
    loosened('risk', `risk ${s.risk} is lower than the tool's ${b.risk}.`);
  if (s.reversible === true && !b.reversible) loosened('reversible', 'the tool declares reversible: false.');
  if (s.approvalValidMinutes !== undefined && s.approvalValidMinutes > b.approvalValidMinutes)
    loosened(
      'approval_valid_minutes',
      `approval_valid_minutes ${s.approvalValidMinutes} is longer than the tool's ${b.approvalValidMinutes}.`,
    );
  const timeout = b.approvalTimeoutHours;
  if (s.approvalTimeoutHours != null && timeout !== null && s.approvalTimeoutHours > timeout)
    loosened(
      'approval_timeout_hours',
      `approval_timeout_hours ${s.approvalTimeoutHours} is longer than the tool's ${timeout}.`,
    );
  for (const g of GUARDS) {
    if (s[g] && b[g]) loosened(g, `the tool declares its own ${g}, which the node keeps.`);
  }
  placeGuards(r, s, ep, ref, base.policy, base.idempotency);
  if (r.sink.errors.length > before) return null;
  // what the node wrote (only written settings are present) over the tool's, redact_result added to it
  const { lookupKeyPath, redactResult = [], ...written } = s;
  return { ...base, ...b, ...written, redactResult: [...new Set([...b.redactResult, ...redactResult])] };
}

/** Where a guard's tool stands among the servers: a message when it is missing or not a read tool. */
function targetProblem(servers: Map<string, ToolServerSpec>, ref: string, brokenNames?: Set<string>) {
  const [, serverName, toolName] = TOOL_REF.exec(ref) ?? [];
  const server = serverName ? servers.get(serverName) : undefined;
  if (!server) {
    if (brokenNames?.has(`server:${serverName}`)) return 'skip';
    return {
      code: APL.GUARD_UNKNOWN_TOOL,
      message: `Unknown tool server "${serverName}" for ${ref}.${didYouMean(serverName ?? '', servers.keys())}`,
    };
  }
  const tool = Object.hasOwn(server.tools, toolName) ? server.tools[toolName] : undefined;
  if (!tool) {
    return {
      code: APL.GUARD_UNKNOWN_TOOL,
      message: `Tool server "${serverName}" has no tool "${toolName}" for this read.${didYouMean(toolName, Object.keys(server.tools))}`,
    };
  }
  if (tool.policy !== 'read') {
    return {
      code: APL.GUARD_NOT_READ,
      message: `${ref} is a ${tool.policy} tool: a precondition or lookup must only read. Name a read tool.`,
    };
  }
  return null;
}

/** The guards of a source's ToolServer: each names an existing read tool (reported on the guard). */
export function checkServerGuards(
  r: Reader,
  spec: ToolServerSpec,
  servers: Map<string, ToolServerSpec>,
  brokenNames: Set<string>,
): void {
  for (const [name, tool] of Object.entries(spec.tools)) {
    for (const g of GUARDS) {
      const guard = tool[g];
      if (!guard) continue;
      const problem = targetProblem(servers, guard.tool, brokenNames);
      if (problem && problem !== 'skip')
        r.err(problem.code, joinKey(joinKey(joinKey('tools', name), g), 'tool'), problem.message);
    }
  }
}

/** A binding as placed on a node: where its entry is, and which guards the node itself wrote. */
export interface PlacedBinding {
  binding: ToolBinding;
  ep: string;
  refPath: string;
  own: Set<Guard>;
}

/** Each guard's tool exists, is a read tool, and is bound (as read) on the same node. */
export function checkNodeGuards(
  r: Reader,
  placed: PlacedBinding[],
  failedRefs: Set<string>,
  ctx: BindingContext,
): void {
  const byRef = new Map(placed.map((x) => [x.binding.ref, x.binding]));
  for (const { binding, ep, refPath, own } of placed) {
    for (const g of GUARDS) {
      const guard = binding[g];
      if (!guard) continue;
      const mine = own.has(g);
      const at = mine ? joinKey(joinKey(ep, g), 'tool') : refPath;
      const from = mine ? '' : ` (the ${g} ${binding.ref} declares on its server)`;
      const problem = targetProblem(ctx.servers, guard.tool, ctx.brokenNames);
      if (problem === 'skip') continue;
      if (problem) {
        // the server's own document in this source already reported it
        if (!mine && ctx.sourceServers?.has(binding.server)) continue;
        r.err(problem.code, at, `${problem.message}${from}`);
        continue;
      }
      const bound = byRef.get(guard.tool);
      if (!bound) {
        if (failedRefs.has(guard.tool)) continue;
        r.err(
          APL.GUARD_NOT_BOUND,
          at,
          `${guard.tool}, the ${g} of ${binding.ref}${from}, is not bound on this node. Add ${guard.tool} to the node's tools.`,
        );
      } else if (bound.policy !== 'read') {
        r.err(
          APL.GUARD_NOT_READ,
          at,
          `${guard.tool}, the ${g} of ${binding.ref}, is ${bound.policy} on this node: a ${g} must only read. Keep it read.`,
        );
      }
    }
  }
}
