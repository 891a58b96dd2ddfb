/** The `Process` document: schema checks, node graph checks and freezing to `FrozenProcess`. */
import { PROCESS_KEY } from './bindings.js';
import { APL, describe, didYouMean, joinIndex, joinKey } from './errors.js';
import { has, isObj, type Obj, type Reader, RESERVED } from './fields.js';
import { type ProcessContext, type Ref, readNode, type Template, VAR_NAME } from './node.js';
import type { FrozenProcess, ProcessNode, VariableSpec, VariableType } from '../../../shared/types.js';

const PROCESS_FIELDS = ['kind', 'key', 'name', 'variables', 'outputs', 'start', 'nodes'];
const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'integer', 'boolean', 'object', 'array'];

/** The nodes read so far, and what later checks need from them. */
interface NodeGraph {
  nodes: ProcessNode[];
  refs: Ref[];
  /** node id → its index in `nodes` as written */
  ids: Map<string, number>;
  templates: Template[];
  resultVariables: Set<string>;
  /** ids of nodes that exist but could not be read (their errors said why): never "missing" elsewhere */
  broken: Map<string, number>;
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
  const name = r.str(doc, 'name', '', 'a Process');
  const variables = readVariables(r, doc);
  const outputs = r.strList(doc, 'outputs', '', 'a Process') ?? [];
  const start = r.str(doc, 'start', '', 'a Process', { required: true, help: 'the id of the first node.' });
  const graph = readNodes(r, doc, ctx);
  if (start !== null) graph.refs.unshift({ target: start, path: 'start', field: 'start' });
  const unknownRefs = checkRefs(r, graph);
  // reachability (only when every reference resolves, so one typo does not cascade)
  const startsAt = start !== null && (graph.ids.has(start) || graph.broken.has(start));
  if (!unknownRefs && start !== null && startsAt) checkReachable(r, graph, start);
  checkVariables(r, graph, variables, outputs);
  if (key === null || start === null || graph.nodes.length === 0) return null;
  return { key, name, variables, outputs, start, nodes: graph.nodes };
}

function readVariables(r: Reader, doc: Obj): Record<string, VariableSpec> {
  const variables: Record<string, VariableSpec> = {};
  if (!has(doc, 'variables') || doc.variables === null) return variables;
  const vm = r.obj(doc.variables, 'variables', '"variables"');
  for (const [vn, spec] of Object.entries(vm ?? {})) {
    const vp = joinKey('variables', vn);
    if (!VAR_NAME.test(vn) || RESERVED.has(vn)) {
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
  return variables;
}

function readNodes(r: Reader, doc: Obj, ctx: ProcessContext): NodeGraph {
  const graph: NodeGraph = {
    nodes: [],
    refs: [],
    ids: new Map(),
    templates: [],
    resultVariables: new Set(),
    broken: new Map(),
  };
  const { ids } = graph;
  if (!has(doc, 'nodes') || doc.nodes === null) {
    r.missing('', 'nodes', 'a Process', 'a list of nodes, ending in { id: done, type: end }.');
    return graph;
  }
  if (!Array.isArray(doc.nodes) || doc.nodes.length === 0) {
    r.err(APL.DOC_FIELD, 'nodes', `nodes must be a non-empty list of nodes, not ${describe(doc.nodes)}.`);
    return graph;
  }
  doc.nodes.forEach((nv, i) => {
    const np = joinIndex('nodes', i);
    const reported = r.sink.errors.length;
    const node = readNode(r, nv, np, ctx, graph.refs, graph.templates);
    if (!node) {
      // a node left out must fail the source: refs to it are not reported again (salvage)
      if (r.sink.errors.length === reported) r.err(APL.DOC_FIELD, np, 'This node could not be read.');
      salvage(graph, nv, i);
      return;
    }
    if (ids.has(node.id)) {
      r.err(
        APL.NODE_DUPLICATE_ID,
        joinKey(np, 'id'),
        `Node id "${node.id}" is already used by nodes[${ids.get(node.id)}]. Give each node its own id.`,
      );
      return;
    }
    ids.set(node.id, i);
    if (node.type === 'agent') graph.resultVariables.add(node.resultVariable);
    graph.nodes.push(node);
  });
  return graph;
}

/** What later checks need of a node that could not be read: its id and its result variable. */
function salvage(graph: NodeGraph, nv: unknown, i: number): void {
  if (!isObj(nv)) return;
  const id = nv.id;
  if (typeof id === 'string' && !graph.ids.has(id) && !graph.broken.has(id)) graph.broken.set(id, i);
  const rv = nv.result_variable;
  if (nv.type === 'agent' && typeof rv === 'string') graph.resultVariables.add(rv);
}

/** Reports every ref to a node that does not exist (a broken one exists); true when there was one. */
function checkRefs(r: Reader, { refs, ids, broken }: NodeGraph): boolean {
  let unknownRefs = false;
  for (const ref of refs) {
    if (!ids.has(ref.target) && !broken.has(ref.target)) {
      unknownRefs = true;
      r.err(
        APL.NODE_UNKNOWN_REF,
        ref.path,
        `${ref.field} names node "${ref.target}", which does not exist.${didYouMean(ref.target, ids.keys())}`,
      );
    }
  }
  return unknownRefs;
}

function checkReachable(r: Reader, { refs, ids, broken }: NodeGraph, start: string): void {
  // paths run through broken nodes too (their refs were read), so nothing after one is "unreachable"
  const at = new Map([...broken, ...ids]);
  const edges = new Map<string, string[]>();
  for (const ref of refs) {
    if (ref.field === 'start') continue;
    const from = ref.path.replace(/^(nodes\[\d+\]).*$/, '$1');
    edges.set(from, [...(edges.get(from) ?? []), ref.target]);
  }
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    for (const t of edges.get(`nodes[${at.get(id)}]`) ?? []) {
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

/** `${variables}` in templates and the outputs must name a declared variable or a node's result. */
function checkVariables(
  r: Reader,
  graph: NodeGraph,
  variables: Record<string, VariableSpec>,
  outputs: string[],
): void {
  const known = new Set([...Object.keys(variables), ...graph.resultVariables]);
  for (const t of graph.templates) checkTemplate(r, t.text, t.path, known);
  outputs.forEach((o, i) => {
    if (!known.has(o)) {
      r.err(
        APL.VAR_UNKNOWN_OUTPUT,
        joinIndex('outputs', i),
        `Output "${o}" is neither a declared variable nor a node's result_variable.${didYouMean(o, known)}`,
      );
    }
  });
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
