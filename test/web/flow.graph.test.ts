/**
 * The process picture's graph, from a frozen spec made by the real APL compiler: every edge kind
 * (next, on_invalid_output, on_low_confidence, the timeout and failure boundaries, delegation), tools
 * with their policies, and the path an instance took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSpec, pathTaken, processGraph, type Spec } from '../../web/components/flow/graph.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER } from '../helpers/fixtures.js';

const SOURCE = `${CRM_SERVER()}---
kind: Process
key: child-check
start: look
nodes:
  - { id: look, type: agent, model: gemini-3.6-flash, prompt: Look., tools: [crm/get_customer], result_variable: r, next: fin }
  - { id: fin, type: end }
---
kind: Process
key: picture
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Help.
    tools:
      - crm/get_customer
      - crm/get_order
      - crm/find_refund
      - { ref: crm/refund, approvers: [finance] }
      - delegate:child-check
    result_variable: outcome
    output_schema: { type: object }
    confidence_threshold: 0.8
    on_invalid_output: review
    on_low_confidence: review
    timeout_minutes: 90
    on_timeout: escalate
    on_failure: review
    next: done
  - { id: review, type: user_task, candidate_groups: [support], next: done }
  - { id: escalate, type: user_task, candidate_groups: [leads], next: done }
  - { id: done, type: end }
`;

let engine: TestEngine;
let spec: Spec;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, 'mutation($s: String!) { deploy(source: $s) { definitions { id } } }', {
    s: SOURCE,
  });
  const d = await engine.ok(engine.adminToken, '{ definitions(key: "picture") { spec } }');
  if (!isSpec(d.definitions[0].spec)) throw new Error('not a frozen process');
  spec = d.definitions[0].spec;
});
afterAll(async () => engine?.close());

describe('processGraph', () => {
  it('draws every node, every kind of edge and each tool with its policy', () => {
    const g = processGraph(spec);
    expect(g.nodes.map((n) => `${n.kind}:${n.id}`).sort()).toEqual(
      [
        'start:__start',
        'agent:triage',
        'user_task:review',
        'user_task:escalate',
        'end:done',
        'delegate:delegate:child-check',
      ].sort(),
    );
    const edges = g.edges.map((e) => `${e.source}->${e.target}:${e.kind}`).sort();
    expect(edges).toEqual(
      [
        '__start->triage:next',
        'triage->done:next',
        'triage->review:invalid',
        'triage->review:low',
        'triage->escalate:timeout',
        'triage->review:failure',
        'triage->delegate:child-check:delegate',
        'review->done:next',
        'escalate->done:next',
      ].sort(),
    );
    const triage = g.nodes.find((n) => n.id === 'triage')!;
    expect(g.edges.filter((e) => e.source === 'triage').map((e) => e.label)).toContain('on timeout (90 min)');
    expect(g.edges.find((e) => e.kind === 'failure')?.label).toBe('on failure');
    expect(triage.tools.map((t) => `${t.ref} ${t.policy.toLowerCase()}`)).toEqual([
      'crm/get_customer read',
      'crm/get_order read',
      'crm/find_refund read',
      'crm/refund approval_required',
    ]);
  });

  it('highlights the path an instance took, through the fallback node', () => {
    const p = pathTaken(spec, ['triage', 'review'], 'review', false);
    expect([...p.nodes].sort()).toEqual(['__start', 'review', 'triage']);
    expect(p.edges.has('e-triage-review-invalid')).toBe(true);
    expect(p.edges.has('e-triage-done-next')).toBe(false);
    const ended = pathTaken(spec, ['triage', 'review'], 'done', true);
    expect(ended.nodes.has('done')).toBe(true);
    expect(ended.edges.has('e-review-done-next')).toBe(true);
  });

  it('highlights a boundary the instance took', () => {
    const p = pathTaken(spec, ['triage'], 'escalate', false);
    expect(p.edges.has('e-triage-escalate-timeout')).toBe(true);
    expect(p.edges.has('e-triage-done-next')).toBe(false);
  });
});
