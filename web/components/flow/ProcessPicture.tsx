'use client';
/**
 * The process as a picture: @xyflow/react draws it, elkjs lays it out (layered, top to bottom), so no
 * position is placed by hand. Agent nodes list their tools with policy badges; on an instance, the nodes
 * and edges of the path taken are highlighted and the current node is ringed. A plain list under the
 * picture says the same for screen readers and for a phone where the picture is small.
 */
import { Controls, Handle, MarkerType, type Edge, type Node, type NodeProps, Position, ReactFlow } from '@xyflow/react';
import ELK from 'elkjs/lib/elk.bundled.js';
import { useEffect, useMemo, useState } from 'react';
import { type GraphEdge, type GraphNode, pathTaken, processGraph, type Spec } from './graph';

type Data = GraphNode & { current: boolean; visited: boolean } & Record<string, unknown>;
type FlowNode = Node<Data, 'step'>;

const KIND: Record<GraphNode['kind'], string> = {
  start: 'start',
  agent: 'agent',
  service: 'service task',
  user_task: 'user task',
  end: 'end',
  delegate: 'child process',
};
/** A boundary edge (timeout, failure) is drawn in the colour of trouble: the token leaves when work goes wrong. */
const BOUNDARY = new Set<GraphEdge['kind']>(['timeout', 'failure']);
const POLICY: Record<string, string> = { READ: 'risk-low', WRITE: 'risk-medium', APPROVAL_REQUIRED: 'risk-high' };

function StepNode({ data }: NodeProps<FlowNode>) {
  return (
    <div
      className={`flow-node ${data.current ? 'current' : data.visited ? 'visited' : ''}`}
      data-node={data.id}
      data-current={data.current || undefined}
      data-visited={data.visited || undefined}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <div className="kind">{KIND[data.kind]}{data.current ? ' · current' : ''}</div>
      <strong>{data.label}</strong>
      {data.detail ? <div className="small">{data.detail}</div> : null}
      {data.tools.length ? (
        <ul>
          {data.tools.map((t) => (
            <li key={t.ref}>
              <code>{t.ref}</code>
              <span className={`badge ${POLICY[t.policy.toUpperCase()] ?? ''}`}>{t.policy.toLowerCase().replace('_', ' ')}</span>
            </li>
          ))}
        </ul>
      ) : null}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}
const nodeTypes = { step: StepNode };

const size = (n: GraphNode) => ({ width: n.tools.length ? 250 : 170, height: 58 + (n.detail ? 16 : 0) + n.tools.length * 22 });

async function layout(nodes: GraphNode[], edges: GraphEdge[]) {
  const elk = new ELK();
  const g = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.spacing.nodeNode': '40',
      'elk.layered.spacing.nodeNodeBetweenLayers': '60',
      'elk.edgeLabels.inline': 'true',
    },
    children: nodes.map((n) => ({ id: n.id, ...size(n) })),
    edges: edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  });
  return new Map((g.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

export function ProcessPicture({
  spec,
  instance,
}: {
  spec: Spec;
  instance?: { taskNodes: readonly string[]; current: string | null; ended: boolean };
}) {
  // the instance page refetches every few seconds: lay out again only when the process itself changed
  const specText = JSON.stringify(spec);
  const graph = useMemo(() => processGraph(JSON.parse(specText) as Spec), [specText]);
  const path = useMemo(
    () => (instance ? pathTaken(spec, instance.taskNodes, instance.current, instance.ended) : null),
    [spec, instance],
  );
  const [positions, setPositions] = useState<Map<string, { x: number; y: number }> | null>(null);
  useEffect(() => {
    let live = true;
    layout(graph.nodes, graph.edges).then((p) => live && setPositions(p));
    return () => {
      live = false;
    };
  }, [graph]);
  const current = instance?.ended ? null : (instance?.current ?? null);
  const nodes: FlowNode[] = graph.nodes.map((n) => ({
    id: n.id,
    type: 'step',
    position: positions?.get(n.id) ?? { x: 0, y: 0 },
    data: { ...n, current: n.id === current, visited: !!path?.nodes.has(n.id) },
    draggable: false,
    selectable: false,
  }));
  const edges: Edge[] = graph.edges.map((e) => {
    const taken = !!path?.edges.has(e.id);
    return {
      id: e.id,
      source: e.source,
      target: e.target,
      label: e.label ?? undefined,
      animated: taken,
      markerEnd: { type: MarkerType.ArrowClosed },
      style: {
        stroke: taken ? 'var(--accent)' : e.kind === 'next' ? 'var(--muted)' : BOUNDARY.has(e.kind) ? 'var(--bad)' : 'var(--warn)',
        strokeWidth: taken ? 3 : 1.5,
        strokeDasharray: e.kind === 'delegate' ? '6 4' : e.kind === 'next' ? undefined : '2 3',
      },
    };
  });
  return (
    <section className="card" aria-labelledby="picture-title" data-testid="process-picture">
      <h2 id="picture-title">Process {spec.key}</h2>
      <div className="flow" data-laid-out={positions ? 'yes' : 'no'}>
        {positions ? (
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            fitView
            nodesDraggable={false}
            nodesConnectable={false}
            elementsSelectable={false}
            proOptions={{ hideAttribution: true }}
            minZoom={0.2}
          >
            <Controls showInteractive={false} />
          </ReactFlow>
        ) : null}
      </div>
      <details className="small">
        <summary>The process as a list</summary>
        <ul data-testid="process-list">
          {graph.edges
            .filter((e) => e.source !== '__start')
            .map((e) => (
              <li key={e.id}>
                {e.source} → {e.target}
                {e.label ? ` (${e.label})` : ''}
                {path?.edges.has(e.id) ? ' — taken' : ''}
              </li>
            ))}
        </ul>
      </details>
    </section>
  );
}
