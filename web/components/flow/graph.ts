/**
 * The frozen process (Definition.spec) as nodes and edges for the picture: `next`, `on_invalid_output`,
 * `on_low_confidence` and the boundary (`on_timeout`, `on_failure`) edges, a delegation as an edge to the
 * child process, and each agent node's tools with their policy. Pure: no layout, no React.
 */

export interface SpecBinding {
  ref: string;
  policy: string;
  server: string;
  tool: string;
}
export interface SpecNode {
  id: string;
  type: 'agent' | 'service' | 'user_task' | 'end';
  next: string | null;
  model?: string;
  onInvalidOutput?: string | null;
  onLowConfidence?: string | null;
  timeoutMinutes?: number | null;
  onTimeout?: string | null;
  onFailure?: string | null;
  bindings?: SpecBinding[];
  candidateGroups?: string[];
}
export interface Spec {
  key: string;
  start: string;
  nodes: SpecNode[];
}

export type EdgeKind = 'next' | 'invalid' | 'low' | 'timeout' | 'failure' | 'delegate';
/** The edges a token moves along (a delegation starts another instance instead). */
const TOKEN_EDGES = ['next', 'invalid', 'low', 'timeout', 'failure'] as const;
export type GraphNode = {
  id: string;
  kind: SpecNode['type'] | 'delegate' | 'start';
  label: string;
  detail: string | null;
  tools: { ref: string; policy: string }[];
};
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  kind: EdgeKind;
  label: string | null;
}

export function isSpec(value: unknown): value is Spec {
  const v = value as Spec | null;
  return !!v && typeof v.start === 'string' && Array.isArray(v.nodes);
}

export function processGraph(spec: Spec): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const nodes: GraphNode[] = [{ id: '__start', kind: 'start', label: 'start', detail: null, tools: [] }];
  const edges: GraphEdge[] = [{ id: 'e-start', source: '__start', target: spec.start, kind: 'next', label: null }];
  const edge = (source: string, target: string | null | undefined, kind: EdgeKind, label: string | null) => {
    if (target) edges.push({ id: `e-${source}-${target}-${kind}`, source, target, kind, label });
  };
  for (const n of spec.nodes) {
    const tools = (n.bindings ?? []).filter((b) => b.server !== 'delegate').map((b) => ({ ref: b.ref, policy: b.policy }));
    const detail =
      n.type === 'agent' ? (n.model ?? null) : n.type === 'user_task' ? `for ${(n.candidateGroups ?? []).join(', ')}` : null;
    nodes.push({ id: n.id, kind: n.type, label: n.id, detail, tools });
    edge(n.id, n.next, 'next', null);
    edge(n.id, n.onInvalidOutput, 'invalid', 'on invalid output');
    edge(n.id, n.onLowConfidence, 'low', 'on low confidence');
    edge(n.id, n.onTimeout, 'timeout', `on timeout (${n.timeoutMinutes} min)`);
    edge(n.id, n.onFailure, 'failure', 'on failure');
    for (const b of n.bindings ?? []) {
      if (b.server !== 'delegate') continue;
      const id = `delegate:${b.tool}`;
      if (!nodes.some((x) => x.id === id)) nodes.push({ id, kind: 'delegate', label: `process ${b.tool}`, detail: 'child process', tools: [] });
      edge(n.id, id, 'delegate', 'delegates');
    }
  }
  return { nodes, edges };
}

/** The path an instance took: the nodes its tasks ran at, in order, and the edges between them. */
export function pathTaken(
  spec: Spec,
  taskNodes: readonly string[],
  current: string | null,
  ended: boolean,
): { nodes: Set<string>; edges: Set<string> } {
  const seq = ['__start', spec.start, ...taskNodes.filter((n, i) => i > 0 || n !== spec.start)];
  if (current && seq[seq.length - 1] !== current) seq.push(current);
  const last = spec.nodes.find((n) => n.id === seq[seq.length - 1]);
  if (ended && last?.next) seq.push(last.next);
  const nodes = new Set(seq);
  const edges = new Set<string>();
  for (let i = 1; i < seq.length; i++) {
    if (seq[i - 1] === seq[i]) continue;
    for (const kind of TOKEN_EDGES) edges.add(`e-${seq[i - 1]}-${seq[i]}-${kind}`);
  }
  edges.add('e-start');
  return { nodes, edges };
}
