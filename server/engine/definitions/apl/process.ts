/** The `Process` document: schema checks, node graph checks and freezing to `FrozenProcess`. */
import { type BindingContext, PROCESS_KEY, resolveBindings } from './bindings.js';
import { APL, describe, didYouMean, joinIndex, joinKey } from './errors.js';
import { has, isObj, type Obj, type Reader, reservedName } from './fields.js';
import { checkJsonSchema } from './schema.js';
import {
  type AgentLimits,
  type AgentNode,
  DEFAULT_AGENT_TOPIC,
  DEFAULT_MAX_ATTEMPTS,
  type FrozenProcess,
  type ProcessNode,
  type VariableSpec,
  type VariableType,
} from './types.js';

export interface ProcessContext extends BindingContext {
  allowedModels: string[] | null;
}

const PROCESS_FIELDS = ['kind', 'key', 'name', 'variables', 'outputs', 'start', 'nodes'];
const NODE_FIELDS: Record<string, string[]> = {
  agent: [
    'id',
    'type',
    'model',
    'fallback_models',
    'prompt',
    'inputs',
    'tools',
    'result_variable',
    'output_schema',
    'confidence_threshold',
    'max_attempts',
    'limits',
    'on_invalid_output',
    'on_low_confidence',
    'next',
    'topic',
    'priority',
  ],
  service: ['id', 'type', 'topic', 'priority', 'max_attempts', 'next'],
  user_task: ['id', 'type', 'candidate_groups', 'next'],
  end: ['id', 'type'],
};
const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'integer', 'boolean', 'object', 'array'];
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const TOPIC = /^[A-Za-z0-9_.:/-]+$/;

interface Ref {
  target: string;
  path: string;
  field: string;
}

export function validateProcess(r: Reader, doc: Obj, ctx: ProcessContext): FrozenProcess | null {
  r.keys(doc, '', PROCESS_FIELDS, 'a Process');
  const key = r.str(doc, 'key', '', 'a Process', {
    required: true,
    pattern: PROCESS_KEY,
    patternHelp:
      'use lower-case letters, digits, "-", "_" or ".", starting with a letter or digit (e.g. support-triage).',
    help: 'a stable identifier, e.g. key: support-triage',
  });
  const name = has(doc, 'name') && doc.name !== null ? r.str(doc, 'name', '', 'a Process') : null;

  const variables: Record<string, VariableSpec> = {};
  if (has(doc, 'variables') && doc.variables !== null) {
    const vm = r.obj(doc.variables, 'variables', '"variables"');
    for (const [vn, spec] of Object.entries(vm ?? {})) {
      const vp = joinKey('variables', vn);
      if (!VAR_NAME.test(vn) || reservedName(vn)) {
        r.err(
          APL.DOC_FIELD,
          vp,
          `Variable name ${JSON.stringify(vn)} is not allowed: use letters, digits and "_".`,
        );
        continue;
      }
      const so = r.obj(spec, vp, `Variable "${vn}"`);
      if (!so) continue;
      r.keys(so, vp, ['type', 'required'], `variable "${vn}"`);
      const required = r.bool(so, 'required', vp, `variable "${vn}"`, false);
      if (!has(so, 'type') || so.type === null) {
        r.missing(vp, 'type', `Variable "${vn}"`, `one of ${VARIABLE_TYPES.join(', ')}.`);
        continue;
      }
      if (!VARIABLE_TYPES.includes(so.type as VariableType)) {
        r.err(
          APL.VAR_BAD_TYPE,
          joinKey(vp, 'type'),
          `Variable "${vn}" has type ${describe(so.type)}: use one of ${VARIABLE_TYPES.join(', ')}.${didYouMean(String(so.type), VARIABLE_TYPES)}`,
        );
        continue;
      }
      variables[vn] = { type: so.type as VariableType, required };
    }
  }
  const outputs = r.strList(doc, 'outputs', '', 'a Process') ?? [];
  const start = r.str(doc, 'start', '', 'a Process', { required: true, help: 'the id of the first node.' });

  const nodes: ProcessNode[] = [];
  const refs: Ref[] = [];
  const ids = new Map<string, number>();
  const nodePaths: string[] = [];
  const templates: { text: string; path: string }[] = [];
  const resultVariables = new Set<string>();
  if (!has(doc, 'nodes') || doc.nodes === null)
    r.missing('', 'nodes', 'a Process', 'a list of nodes, ending in { id: done, type: end }.');
  else if (!Array.isArray(doc.nodes) || doc.nodes.length === 0) {
    r.err(APL.DOC_FIELD, 'nodes', `nodes must be a non-empty list of nodes, not ${describe(doc.nodes)}.`);
  } else {
    doc.nodes.forEach((nv, i) => {
      const np = joinIndex('nodes', i);
      const node = readNode(r, nv, np, ctx, refs, templates);
      if (!node) return;
      if (ids.has(node.id)) {
        r.err(
          APL.NODE_DUPLICATE_ID,
          joinKey(np, 'id'),
          `Node id "${node.id}" is already used by nodes[${ids.get(node.id)}]. Give each node its own id.`,
        );
        return;
      }
      ids.set(node.id, i);
      nodePaths.push(np);
      if (node.type === 'agent') resultVariables.add(node.resultVariable);
      nodes.push(node);
    });
  }
  // node references
  let unknownRefs = false;
  if (start !== null) refs.unshift({ target: start, path: 'start', field: 'start' });
  for (const ref of refs) {
    if (!ids.has(ref.target)) {
      unknownRefs = true;
      r.err(
        APL.NODE_UNKNOWN_REF,
        ref.path,
        `${ref.field} names node "${ref.target}", which does not exist.${didYouMean(ref.target, ids.keys())}`,
      );
    }
  }
  // reachability (only when every reference resolves, so one typo does not cascade)
  if (!unknownRefs && start !== null && ids.has(start)) {
    const edges = new Map<string, string[]>();
    for (const ref of refs) {
      if (ref.field === 'start') continue;
      const from = ref.path.replace(/^(nodes\[\d+\]).*$/, '$1');
      const list = edges.get(from) ?? [];
      list.push(ref.target);
      edges.set(from, list);
    }
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const id = queue.shift() as string;
      for (const t of edges.get(`nodes[${ids.get(id)}]`) ?? []) {
        if (!seen.has(t)) {
          seen.add(t);
          queue.push(t);
        }
      }
    }
    for (const [id, i] of ids) {
      if (!seen.has(id)) {
        r.err(
          APL.NODE_UNREACHABLE,
          joinIndex('nodes', i),
          `Node "${id}" can never run: no path leads to it from start "${start}". Link it or remove it.`,
        );
      }
    }
  }
  // ${variables}
  const known = new Set([...Object.keys(variables), ...resultVariables]);
  for (const t of templates) checkTemplate(r, t.text, t.path, known);
  outputs.forEach((o, i) => {
    if (!known.has(o)) {
      r.err(
        APL.VAR_UNKNOWN_OUTPUT,
        joinIndex('outputs', i),
        `Output "${o}" is neither a declared variable nor a node's result_variable.${didYouMean(o, known)}`,
      );
    }
  });
  if (key === null || start === null || nodes.length === 0) return null;
  return { key, name, variables, outputs, start, nodes };
}

function checkTemplate(r: Reader, text: string, path: string, known: Set<string>): void {
  const re = /\$\{([^}]*)\}?/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (!m[0].endsWith('}')) {
      r.err(APL.VAR_UNDECLARED, path, `"\${" is not closed: write \${name}.`);
      continue;
    }
    const inner = m[1].trim();
    const pm = /^([A-Za-z_][A-Za-z0-9_]*)((\.[A-Za-z_][A-Za-z0-9_]*)|(\[\d+\]))*$/.exec(inner);
    if (!pm) {
      r.err(
        APL.VAR_UNDECLARED,
        path,
        `\${${inner.slice(0, 40)}} is not a variable reference: write \${name} or \${name.field}.`,
      );
      continue;
    }
    if (!known.has(pm[1])) {
      r.err(
        APL.VAR_UNDECLARED,
        path,
        `\${${pm[1]}} names no declared variable. Declare it under variables.${didYouMean(pm[1], known)}`,
      );
    }
  }
}

function readNode(
  r: Reader,
  value: unknown,
  np: string,
  ctx: ProcessContext,
  refs: Ref[],
  templates: { text: string; path: string }[],
): ProcessNode | null {
  const o = r.obj(value, np, 'A node');
  if (!o) return null;
  const id = r.str(o, 'id', np, 'a node', {
    required: true,
    pattern: NODE_ID,
    patternHelp: 'start with a letter or "_", then letters, digits, "_", "-" or ".".',
  });
  const type = get(o, 'type');
  const what = `node "${id ?? `#${np}`}"`;
  if (type === undefined || type === null) {
    r.missing(np, 'type', `Node ${id ?? np}`, 'agent, service, user_task or end.');
    return null;
  }
  if (typeof type !== 'string' || !Object.hasOwn(NODE_FIELDS, type)) {
    r.err(
      APL.DOC_FIELD,
      joinKey(np, 'type'),
      `Node type must be agent, service, user_task or end, not ${describe(type)}.${didYouMean(String(type), Object.keys(NODE_FIELDS))}`,
    );
    return null;
  }
  r.keys(
    o,
    np,
    NODE_FIELDS[type],
    `${type} ${what}`,
    type === 'end' ? { next: 'An end node has no next: remove it.' } : {},
  );
  let next: string | null = null;
  const addRef = (field: string): string | null => {
    const v = r.str(o, field, np, what);
    if (v !== null) refs.push({ target: v, path: joinKey(np, field), field });
    return v;
  };
  if (type !== 'end') {
    next = addRef('next');
    if (!has(o, 'next') || o.next === null) {
      r.err(
        APL.NODE_MISSING_NEXT,
        np,
        `Node "${id ?? np}" has no next: name the node that follows (an end node finishes the process).`,
      );
    }
  }
  if (id === null) return null;
  if (type === 'end') return { id, type, next: null };
  if (type === 'user_task') {
    const groups = r.strList(o, 'candidate_groups', np, what);
    if (groups === null || groups.length === 0) {
      if (groups === null && !has(o, 'candidate_groups'))
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
    return { id, type, next, candidateGroups: groups };
  }
  const priority = r.num(o, 'priority', np, what, { integer: true }) ?? 0;
  const maxAttempts =
    r.num(o, 'max_attempts', np, what, { integer: true, positive: true }) ?? DEFAULT_MAX_ATTEMPTS;
  if (type === 'service') {
    const topic = r.str(o, 'topic', np, what, {
      required: true,
      pattern: TOPIC,
      patternHelp: 'use letters, digits, "-", "_", ".", ":".',
      help: 'the external task topic workers fetch, e.g. notify.',
    });
    if (topic === null) return null;
    return { id, type, next, topic, priority, maxAttempts };
  }
  // agent
  const topic =
    r.str(o, 'topic', np, what, {
      pattern: TOPIC,
      patternHelp: 'use letters, digits, "-", "_", ".", ":".',
    }) ?? DEFAULT_AGENT_TOPIC;
  const model = r.str(o, 'model', np, what, {
    required: true,
    help: 'the model the agent runs, e.g. gpt-4.1-mini.',
  });
  const fallbackModels = r.strList(o, 'fallback_models', np, what) ?? [];
  const checkModel = (m: string, p: string) => {
    if (ctx.allowedModels !== null && !ctx.allowedModels.includes(m)) {
      r.err(
        APL.MODEL_NOT_ALLOWED,
        p,
        `Model "${m}" is outside ABADA_AGENT_ALLOWED_MODELS (${ctx.allowedModels.join(', ') || 'none'}). Use an allowed model.${didYouMean(m, ctx.allowedModels)}`,
      );
    }
  };
  if (model !== null) checkModel(model, joinKey(np, 'model'));
  fallbackModels.forEach((m, i) => {
    checkModel(m, joinIndex(joinKey(np, 'fallback_models'), i));
  });
  const prompt = r.str(o, 'prompt', np, what, { required: true, help: 'the instructions for the agent.' });
  if (prompt !== null) templates.push({ text: prompt, path: joinKey(np, 'prompt') });
  const inputs = r.strMap(o, 'inputs', np, what);
  for (const [k, v] of Object.entries(inputs))
    templates.push({ text: v, path: joinKey(joinKey(np, 'inputs'), k) });
  const resultVariable = r.str(o, 'result_variable', np, what, {
    required: true,
    pattern: VAR_NAME,
    patternHelp: 'use letters, digits and "_".',
    help: "the variable the agent's answer is stored in.",
  });
  if (resultVariable !== null && reservedName(resultVariable)) {
    r.err(
      APL.DOC_FIELD,
      joinKey(np, 'result_variable'),
      `"${resultVariable}" cannot be a variable name. Rename it.`,
    );
  }
  let outputSchema: Record<string, unknown> | null = null;
  if (has(o, 'output_schema') && o.output_schema !== null) {
    const problem = checkJsonSchema(o.output_schema);
    if (problem)
      r.err(
        APL.SCHEMA_INVALID,
        joinKey(np, 'output_schema'),
        `output_schema is not a valid JSON Schema: ${problem}. Fix the schema.`,
      );
    else outputSchema = o.output_schema as Record<string, unknown>;
  }
  const confidenceThreshold = r.num(o, 'confidence_threshold', np, what, { min: 0, max: 100 });
  const limits: AgentLimits = { maxTurns: null, maxTokensTotal: null, budgetUsd: null };
  if (has(o, 'limits') && o.limits !== null) {
    const lp = joinKey(np, 'limits');
    const lo = r.obj(o.limits, lp, '"limits"');
    if (lo) {
      r.keys(lo, lp, ['max_turns', 'max_tokens_total', 'budget_usd'], 'limits');
      limits.maxTurns = r.num(lo, 'max_turns', lp, 'limits', { integer: true, positive: true });
      limits.maxTokensTotal = r.num(lo, 'max_tokens_total', lp, 'limits', { integer: true, positive: true });
      limits.budgetUsd = r.num(lo, 'budget_usd', lp, 'limits', { positive: true });
    }
  }
  const onInvalidOutput = addRef('on_invalid_output');
  const onLowConfidence = addRef('on_low_confidence');
  const bindings = resolveBindings(r, get(o, 'tools'), np, ctx);
  if (model === null || prompt === null || resultVariable === null) return null;
  const node: AgentNode = {
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
  };
  return node;
}

function get(o: Obj, key: string): unknown {
  return isObj(o) && Object.hasOwn(o, key) ? o[key] : undefined;
}
