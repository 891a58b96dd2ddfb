/** One node of a `Process` document: its schema checks and freezing to a `ProcessNode`. */
import { resolveBindings } from './bindings.js';
import type { BindingContext } from './guards.js';
import { APL, describe, didYouMean, joinIndex, joinKey } from './errors.js';
import { has, type Obj, type Reader, RESERVED } from './fields.js';
import { readSchema } from './schema.js';
import { redactPaths } from './settings.js';
import type { AgentLimits, AgentNode, ProcessNode } from '../../../shared/types.js';

export interface ProcessContext extends BindingContext {
  allowedModels: string[] | null;
  /** models with a price in force; null = not checked */
  pricedModels: ReadonlySet<string> | null;
}

/** A node id named by another field (`start`, `next`, `on_…`), checked once every node is read. */
export interface Ref {
  target: string;
  path: string;
  field: string;
}

/** Text with `${variables}`, checked once every declared and result variable is known. */
export interface Template {
  text: string;
  path: string;
}

/** The version of the agent profile (`AgentWork`) an agent node's external task carries for its worker. */
export const AGENT_PROFILE_VERSION = 'abada.agent/v1';
const DEFAULT_AGENT_TOPIC = 'abada:agent';
const DEFAULT_MAX_ATTEMPTS = 3;
export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const TOPIC = { pattern: /^[A-Za-z0-9_.:/-]+$/, patternHelp: 'use letters, digits, "-", "_", ".", ":".' };
const NODE_FIELDS: Record<string, string[]> = {
  agent: [
    ...['id', 'type', 'model', 'fallback_models', 'prompt', 'inputs', 'tools', 'result_variable'],
    ...['output_schema', 'confidence_threshold', 'max_attempts', 'limits', 'on_invalid_output'],
    ...['on_low_confidence', 'next', 'topic', 'priority', 'redact_inputs', 'timeout_minutes'],
    ...['on_timeout', 'on_failure'],
  ],
  service: ['id', 'type', 'topic', 'priority', 'max_attempts', 'next'],
  user_task: ['id', 'type', 'candidate_groups', 'next'],
  end: ['id', 'type'],
};

type NodeId = Pick<ProcessNode, 'id' | 'next'>;

/** What every node reader needs: the node, how errors name it, and where its refs are collected. */
interface NodeScope {
  r: Reader;
  o: Obj;
  np: string;
  what: string;
  refs: Ref[];
}

export function readNode(
  r: Reader,
  value: unknown,
  np: string,
  ctx: ProcessContext,
  refs: Ref[],
  templates: Template[],
): ProcessNode | null {
  const o = r.obj(value, np, 'A node');
  if (!o) return null;
  const id = r.str(o, 'id', np, 'a node', {
    required: true,
    pattern: NODE_ID,
    patternHelp: 'start with a letter or "_", then letters, digits, "_", "-" or ".".',
  });
  const s: NodeScope = { r, o, np, what: `node "${id ?? `#${np}`}"`, refs };
  const head = readHead(s, id);
  if (!head) return null;
  if (head.type === 'end') return { id: head.id, type: 'end', next: null };
  if (head.type === 'user_task') return readUserTask(s, head);
  const priority = r.num(o, 'priority', np, s.what, { integer: true }) ?? 0;
  const maxAttempts =
    r.num(o, 'max_attempts', np, s.what, { integer: true, positive: true }) ?? DEFAULT_MAX_ATTEMPTS;
  if (head.type === 'service') {
    const topic = r.str(o, 'topic', np, s.what, {
      ...TOPIC,
      required: true,
      help: 'the external task topic workers fetch, e.g. notify.',
    });
    if (topic === null) return null;
    return { id: head.id, type: 'service', next: head.next, topic, priority, maxAttempts };
  }
  return readAgent(s, head, { priority, maxAttempts }, ctx, templates);
}

/** The type, the fields it allows and `next`; null when the node cannot be read further. */
function readHead(s: NodeScope, id: string | null) {
  const { r, o, np } = s;
  const type = o.type;
  if (type === undefined || type === null) {
    r.missing(np, 'type', `Node ${id ?? np}`, 'agent, service, user_task or end.');
    return null;
  }
  if (typeof type !== 'string' || !Object.hasOwn(NODE_FIELDS, type)) {
    return r.err(
      APL.DOC_FIELD,
      joinKey(np, 'type'),
      `Node type must be agent, service, user_task or end, not ${describe(type)}.${didYouMean(String(type), Object.keys(NODE_FIELDS))}`,
    );
  }
  r.keys(
    o,
    np,
    NODE_FIELDS[type],
    `${type} ${s.what}`,
    type === 'end' ? { next: 'An end node has no next: remove it.' } : {},
  );
  let next: string | null = null;
  if (type !== 'end') {
    next = addRef(s, 'next');
    if (!has(o, 'next') || o.next === null) {
      r.err(
        APL.NODE_MISSING_NEXT,
        np,
        `Node "${id ?? np}" has no next: name the node that follows (an end node finishes the process).`,
      );
    }
  }
  if (id === null) return null;
  return { id, type, next };
}

function addRef(s: NodeScope, field: string): string | null {
  const v = s.r.str(s.o, field, s.np, s.what);
  if (v !== null) s.refs.push({ target: v, path: joinKey(s.np, field), field });
  return v;
}

function readUserTask({ r, o, np, what }: NodeScope, { id, next }: NodeId): ProcessNode | null {
  const groups = r.strList(o, 'candidate_groups', np, what);
  if (groups === null || groups.length === 0) {
    if (groups === null && o.candidate_groups == null)
      r.missing(
        np,
        'candidate_groups',
        `User task "${id}"`,
        'the groups who may complete it, e.g. [support].',
      );
    else if (groups)
      r.err(APL.DOC_FIELD, joinKey(np, 'candidate_groups'), 'candidate_groups needs at least one group.');
    return null;
  }
  return { id, type: 'user_task', next, candidateGroups: groups };
}

function readAgent(
  s: NodeScope,
  { id, next }: NodeId,
  { priority, maxAttempts }: { priority: number; maxAttempts: number },
  ctx: ProcessContext,
  templates: Template[],
): AgentNode | null {
  const { r, o, np, what } = s;
  const topic = r.str(o, 'topic', np, what, TOPIC) ?? DEFAULT_AGENT_TOPIC;
  const { model, fallbackModels, placed } = readModels(s, ctx);
  const prompt = r.str(o, 'prompt', np, what, { required: true, help: 'the instructions for the agent.' });
  if (prompt !== null) templates.push({ text: prompt, path: joinKey(np, 'prompt') });
  const inputs = r.strMap(o, 'inputs', np, what);
  for (const [k, v] of Object.entries(inputs))
    templates.push({ text: v, path: joinKey(joinKey(np, 'inputs'), k) });
  const resultVariable = readResultVariable(s);
  const outputSchema = readSchema(r, o, 'output_schema', np);
  const confidenceThreshold = r.num(o, 'confidence_threshold', np, what, { min: 0, max: 100 });
  const limits = readLimits(s);
  checkPriced(s, placed, limits, ctx);
  const onInvalidOutput = addRef(s, 'on_invalid_output');
  const onLowConfidence = addRef(s, 'on_low_confidence');
  const bindings = resolveBindings(r, o.tools, np, ctx);
  const redactInputs = readRedactInputs(s, inputs);
  const boundaries = readBoundaries(s);
  if (model === null || prompt === null || resultVariable === null) return null;
  return {
    id,
    type: 'agent',
    next,
    topic,
    priority,
    model,
    fallbackModels,
    prompt,
    inputs,
    bindings,
    resultVariable,
    outputSchema,
    confidenceThreshold,
    maxAttempts,
    limits,
    onInvalidOutput,
    onLowConfidence,
    redactInputs,
    ...boundaries,
  };
}

/**
 * The boundaries (SPEC §15.4): `timeout_minutes` with `on_timeout` (one without the other would do
 * nothing, so is refused), and `on_failure`. Only written fields are returned: no boundaries, no change.
 */
function readBoundaries(s: NodeScope): Pick<AgentNode, 'timeoutMinutes' | 'onTimeout' | 'onFailure'> {
  const { r, o, np, what } = s;
  const out: Pick<AgentNode, 'timeoutMinutes' | 'onTimeout' | 'onFailure'> = {};
  const minutes = r.num(o, 'timeout_minutes', np, what, { positive: true });
  const onTimeout = addRef(s, 'on_timeout');
  const onFailure = addRef(s, 'on_failure');
  const written = (k: string) => has(o, k) && o[k] !== null;
  const help: Record<string, string> = {
    timeout_minutes: 'the minutes after which the node times out, e.g. timeout_minutes: 60.',
    on_timeout: 'the node the token moves to when the time is up, e.g. on_timeout: escalate.',
  };
  const pairs = { on_timeout: 'timeout_minutes', timeout_minutes: 'on_timeout' };
  for (const [field, needs] of Object.entries(pairs)) {
    if (written(field) && !written(needs)) r.missing(np, needs, `${field} on ${what}`, help[needs]);
  }
  if (minutes !== null && onTimeout !== null) Object.assign(out, { timeoutMinutes: minutes, onTimeout });
  if (onFailure !== null) out.onFailure = onFailure;
  return out;
}

/** `redact_inputs`: paths in the node's inputs kept out of evidence; each must start at an input. */
function readRedactInputs({ r, o, np, what }: NodeScope, inputs: Record<string, string>): string[] {
  const list = r.strList(o, 'redact_inputs', np, what);
  if (!list) return [];
  const lp = joinKey(np, 'redact_inputs');
  const paths = redactPaths(r, list, lp, 'input paths');
  return paths.filter((path) => {
    const root = /^[A-Za-z_$][\w$-]*/.exec(path)?.[0] ?? '';
    if (Object.hasOwn(inputs, root)) return true;
    r.err(
      APL.REDACT_INVALID,
      joinIndex(lp, list.indexOf(path)),
      `redact_inputs path ${JSON.stringify(path)} names no input of this node (it has: ${Object.keys(inputs).join(', ') || 'none'}).${didYouMean(root, Object.keys(inputs))}`,
    );
    return false;
  });
}

/** The node's models, each checked against ABADA_AGENT_ALLOWED_MODELS, with the path it is written at. */
function readModels({ r, o, np, what }: NodeScope, ctx: ProcessContext) {
  const model = r.str(o, 'model', np, what, {
    required: true,
    help: 'the model the agent runs, e.g. gpt-4.1-mini.',
  });
  const fallbackModels = r.strList(o, 'fallback_models', np, what) ?? [];
  const fallbacks = joinKey(np, 'fallback_models');
  const placed = fallbackModels.map((m, i): [string, string] => [m, joinIndex(fallbacks, i)]);
  if (model !== null) placed.unshift([model, joinKey(np, 'model')]);
  const allowed = ctx.allowedModels;
  for (const [m, p] of placed) {
    if (allowed !== null && !allowed.includes(m)) {
      r.err(
        APL.MODEL_NOT_ALLOWED,
        p,
        `Model "${m}" is outside ABADA_AGENT_ALLOWED_MODELS (${allowed.join(', ') || 'none'}). Use an allowed model.${didYouMean(m, allowed)}`,
      );
    }
  }
  return { model, fallbackModels, placed };
}

/**
 * `budget_usd` needs prices (SPEC §15.6): a model with no price costs nothing, so a budget on it would
 * never stop anything. A model outside the allow-list has its own error already.
 */
function checkPriced({ r }: NodeScope, placed: [string, string][], limits: AgentLimits, ctx: ProcessContext) {
  const { pricedModels: priced, allowedModels: allowed } = ctx;
  if (priced === null || limits.budgetUsd == null) return;
  for (const [model, path] of placed) {
    if (priced.has(model) || (allowed !== null && !allowed.includes(model))) continue;
    r.err(
      APL.MODEL_NO_PRICE,
      path,
      `Model "${model}" has no price, so budget_usd could not count its calls. An admin sets one with setModelPrice (abada price set ${model} --input USD --output USD), or remove budget_usd.`,
    );
  }
}

function readResultVariable({ r, o, np, what }: NodeScope): string | null {
  const resultVariable = r.str(o, 'result_variable', np, what, {
    required: true,
    pattern: VAR_NAME,
    patternHelp: 'use letters, digits and "_".',
    help: "the variable the agent's answer is stored in.",
  });
  if (resultVariable !== null && RESERVED.has(resultVariable)) {
    r.err(
      APL.DOC_FIELD,
      joinKey(np, 'result_variable'),
      `"${resultVariable}" cannot be a variable name. Rename it.`,
    );
  }
  return resultVariable;
}

function readLimits({ r, o, np }: NodeScope): AgentLimits {
  const limits: AgentLimits = { maxTurns: null, maxTokensTotal: null, budgetUsd: null };
  if (!has(o, 'limits') || o.limits === null) return limits;
  const lp = joinKey(np, 'limits');
  const lo = r.obj(o.limits, lp, '"limits"');
  if (lo) {
    r.keys(lo, lp, ['max_turns', 'max_tokens_total', 'budget_usd'], 'limits');
    limits.maxTurns = r.num(lo, 'max_turns', lp, 'limits', { integer: true, positive: true });
    limits.maxTokensTotal = r.num(lo, 'max_tokens_total', lp, 'limits', { integer: true, positive: true });
    limits.budgetUsd = r.num(lo, 'budget_usd', lp, 'limits', { positive: true });
  }
  return limits;
}
