/**
 * Boundaries on agent nodes (SPEC §15.4) at deploy: `timeout_minutes` with `on_timeout`, `on_failure`.
 * Both halves of the timeout or neither; targets must exist; the minutes are a number above 0, fractions
 * allowed; a node without boundaries freezes exactly as before (no new keys).
 */
import { describe, expect, it } from 'vitest';
import type { AgentNode } from '../../../server/engine/definitions/index.js';
import { validateSource } from '../../../server/engine/definitions/testing.js';
import { ctx, errorsOf, processWith } from './fixtures.js';

/** processWith's agent `a`, with `extra` lines (line 11 on), and a `late` end node for the targets. */
const withBoundary = (...extra: string[]) =>
  processWith({ agentExtra: extra.map((l) => `    ${l}\n`).join('') }).replace(
    '  - id: done\n',
    '  - { id: late, type: end }\n  - id: done\n',
  );

function agentOf(source: string): AgentNode {
  const r = validateSource(source, ctx());
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.deployment.processes[0].nodes[0] as AgentNode;
}

const codes = (source: string) => errorsOf(source).map((e) => [e.code, e.line, e.path]);

describe('APL boundaries on agent nodes', () => {
  it('freezes timeout_minutes (fractions allowed), on_timeout and on_failure', () => {
    const a = agentOf(withBoundary('timeout_minutes: 0.25', 'on_timeout: late', 'on_failure: late'));
    expect(a).toMatchObject({ timeoutMinutes: 0.25, onTimeout: 'late', onFailure: 'late' });
    expect(agentOf(withBoundary('on_failure: late'))).toMatchObject({ onFailure: 'late' });
  });

  it('a node without boundaries freezes without their keys', () => {
    const a = agentOf(processWith());
    expect(Object.keys(a)).not.toContain('timeoutMinutes');
    expect(Object.keys(a)).not.toContain('onTimeout');
    expect(Object.keys(a)).not.toContain('onFailure');
  });

  it('refuses an unknown target with ABADA-APL-NODE-001, with a hint', () => {
    const errors = errorsOf(withBoundary('timeout_minutes: 5', 'on_timeout: lat', 'on_failure: nowhere'));
    expect(errors.map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-NODE-001', 12, 'documents[0].nodes[0].on_timeout'],
      ['ABADA-APL-NODE-001', 13, 'documents[0].nodes[0].on_failure'],
    ]);
    expect(errors[0].message).toContain('Did you mean "late"');
  });

  it('refuses on_timeout without timeout_minutes, and timeout_minutes without on_timeout', () => {
    const [e] = errorsOf(withBoundary('on_timeout: late'));
    expect([e.code, e.path]).toEqual(['ABADA-APL-DOC-002', 'documents[0].nodes[0].timeout_minutes']);
    expect(e.message).toMatch(/on_timeout on node "a" needs "timeout_minutes"/);
    const [f] = errorsOf(withBoundary('timeout_minutes: 30'));
    expect([f.code, f.path]).toEqual(['ABADA-APL-DOC-002', 'documents[0].nodes[0].on_timeout']);
    expect(f.message).toContain('the node the token moves to');
  });

  it('refuses minutes that are not a number above 0', () => {
    expect(codes(withBoundary('timeout_minutes: 0', 'on_timeout: late'))).toEqual([
      ['ABADA-APL-LIMIT-001', 11, 'documents[0].nodes[0].timeout_minutes'],
    ]);
    expect(codes(withBoundary('timeout_minutes: -1.5', 'on_timeout: late'))[0][0]).toBe(
      'ABADA-APL-LIMIT-001',
    );
    expect(codes(withBoundary('timeout_minutes: soon', 'on_timeout: late'))).toEqual([
      ['ABADA-APL-DOC-002', 11, 'documents[0].nodes[0].timeout_minutes'],
    ]);
  });

  it('boundary targets count as paths: a node reached only through one is not unreachable', () => {
    // `late` is reached only through the boundaries; without them it is NODE-004
    expect(codes(withBoundary())).toEqual([['ABADA-APL-NODE-004', 12, 'documents[0].nodes[1]']]);
    expect(errorsOf(withBoundary('on_failure: late'))).toEqual([]);
  });

  it('boundaries belong to agent nodes: a service node refuses them (ABADA-APL-DOC-003)', () => {
    const src = withBoundary().replace(
      '  - { id: late, type: end }',
      '  - { id: late, type: service, topic: t, on_failure: done, next: done }',
    );
    expect(codes(src).map((c) => c[0])).toContain('ABADA-APL-DOC-003');
  });
});
