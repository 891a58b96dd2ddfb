// biome-ignore-all lint/suspicious/noTemplateCurlyInString: APL sources use ${name} templates literally
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { APL_ERROR_CODES, validateSource } from '../../../server/engine/definitions/testing.js';
import { ctx, errorsOf, expectError, processWith } from './fixtures.js';

const lines = (...l: string[]) => `${l.join('\n')}\n`;

const PROC = (nodes: string[], head: string[] = []) =>
  lines('kind: Process', 'key: p', ...head, 'start: a', 'nodes:', ...nodes);

describe('APL document errors', () => {
  it('docs/apl.md lists every error code', () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../../docs/apl.md'), 'utf8');
    for (const code of Object.values(APL_ERROR_CODES)) expect(doc, code).toContain(`| \`${code}\` |`);
  });

  it('ABADA-APL-YAML-001 bad YAML with line and column', () => {
    const e = expectError(
      lines('kind: Process', 'key: p', 'nodes: [a, b', 'start: a'),
      'ABADA-APL-YAML-001',
      4,
    );
    expect(e.column).toBe(1);
    const dup = expectError(lines('kind: Process', 'key: p', 'key: q'), 'ABADA-APL-YAML-001', 3);
    expect(dup.message).toContain('unique');
  });

  it('ABADA-APL-YAML-002 oversized or absurdly nested sources', () => {
    expectError(`kind: Process\nx: ${'['.repeat(100)}${']'.repeat(100)}\n`, 'ABADA-APL-YAML-002', 2);
    expectError('a'.repeat(1024 * 1024 + 1), 'ABADA-APL-YAML-002', 1);
  });

  it('ABADA-APL-DOC-001 missing or unknown kind; a scalar document', () => {
    expectError(lines('key: p'), 'ABADA-APL-DOC-001', 1);
    const e = expectError(
      lines('kind: Proces', 'key: p'),
      'ABADA-APL-DOC-001',
      1,
      ctx(),
      'documents[0].kind',
    );
    expect(e.message).toContain('Did you mean "Process"');
    expectError(lines(processWith().trimEnd(), '---', 'just a string'), 'ABADA-APL-DOC-001', 15);
  });

  it('ABADA-APL-DOC-002 a required field missing or of the wrong type', () => {
    const src = lines(
      'kind: ToolServer', // 1
      'name: crm', // 2
      'transport: streamable-http', // 3
      'tools:', // 4
      '  t: { policy: read, editable: maybe }', // 5
    );
    const errors = errorsOf(src);
    expect(errors.map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-DOC-002', 1, 'documents[0].url'],
      ['ABADA-APL-DOC-002', 5, 'documents[0].tools.t.editable'],
    ]);
    expectError(
      lines('kind: ToolServer', 'name: s', 'transport: stdio', 'tools: {}'),
      'ABADA-APL-DOC-002',
      1,
      ctx(),
      'documents[0].command',
    );
    expectError(
      PROC([
        '  - { id: a, type: agent, prompt: hi, result_variable: r, next: b }',
        '  - { id: b, type: end }',
      ]),
      'ABADA-APL-DOC-002',
      5,
      ctx(),
      'documents[0].nodes[0].model',
    );
    // a required list written as null is missing, not a node silently left out (start: a would dangle)
    expectError(
      PROC(['  - { id: a, type: user_task, candidate_groups: null, next: b }', '  - { id: b, type: end }']),
      'ABADA-APL-DOC-002',
      5,
      ctx(),
      'documents[0].nodes[0].candidate_groups',
    );
  });

  it('ABADA-APL-DOC-003 unknown field (typo protection)', () => {
    const e = expectError(processWith({ agentExtra: '    promt: hello\n' }), 'ABADA-APL-DOC-003', 11);
    expect(e.message).toContain('Did you mean "prompt"');
    expectError(PROC(['  - { id: a, type: end, next: a }']), 'ABADA-APL-DOC-003', 5);
    expectError(
      lines(
        'kind: ToolServer',
        'name: s',
        'transport: streamable-http',
        'url: http://x/mcp',
        'command: npx',
        'tools: {}',
      ),
      'ABADA-APL-DOC-003',
      5,
    );
  });

  it('ABADA-APL-DOC-004 duplicate process key, ABADA-APL-DOC-005 duplicate tool server in one source', () => {
    const ts = lines(
      'kind: ToolServer',
      'name: s',
      'transport: streamable-http',
      'url: http://x/mcp',
      'tools: {}',
    );
    expectError(`${ts}---\n${ts}`, 'ABADA-APL-DOC-005', 8);
    expectError(`${processWith()}---\n${processWith()}`, 'ABADA-APL-DOC-004', 16);
  });

  it('ABADA-APL-DOC-006 empty source', () => {
    for (const s of ['', '   \n', '# only a comment\n', '---\n---\n']) {
      const r = validateSource(s, ctx());
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors.map((e) => [e.code, e.line])).toEqual([['ABADA-APL-DOC-006', 1]]);
    }
  });

  it('ABADA-APL-NODE-001 unknown node references', () => {
    const src = PROC([
      '  - id: a', // 5
      '    type: agent', // 6
      '    model: m', // 7
      '    prompt: p', // 8
      '    result_variable: r', // 9
      '    on_invalid_output: reviw', // 10
      '    on_low_confidence: nowhere', // 11
      '    next: b', // 12
      '  - { id: b, type: service, topic: t, next: dne }', // 13
      '  - { id: review, type: end }', // 14
    ]);
    const errors = errorsOf(src);
    expect(errors.map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-NODE-001', 10, 'documents[0].nodes[0].on_invalid_output'],
      ['ABADA-APL-NODE-001', 11, 'documents[0].nodes[0].on_low_confidence'],
      ['ABADA-APL-NODE-001', 13, 'documents[0].nodes[1].next'],
    ]);
    expect(errors[0].message).toContain('Did you mean "review"');
    expectError(PROC(['  - { id: x, type: end }']), 'ABADA-APL-NODE-001', 3, ctx(), 'documents[0].start');
  });

  it('a node that exists but is broken is reported once, never as missing where start or next name it', () => {
    const src = PROC([
      '  - id: a', // 5
      '    type: agent', // 6
      '    model: m', // 7
      '    prompt: p', // 8
      '    next: b', // 9
      '  - { id: b, type: service, topic: t, next: c }', // 10
      '  - { id: c, type: service, topic: "bad topic", next: a }', // 11
      '  - { id: d, type: user_task, candidate_groups: [x], next: done }', // 12 (reached only through c)
      '  - { id: done, type: end }', // 13
    ]).replace('next: a }', 'next: d }');
    expect(errorsOf(src).map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-DOC-002', 5, 'documents[0].nodes[0].result_variable'],
      ['ABADA-APL-DOC-002', 11, 'documents[0].nodes[2].topic'],
    ]);
    // a broken agent's result_variable is still known to the templates that use it
    const uses = PROC([
      '  - { id: a, type: agent, prompt: p, result_variable: r, next: b }',
      '  - { id: b, type: agent, model: m, prompt: "${r}", result_variable: s, next: done }',
      '  - { id: done, type: end }',
    ]);
    expect(errorsOf(uses).map((e) => [e.code, e.path])).toEqual([
      ['ABADA-APL-DOC-002', 'documents[0].nodes[0].model'],
    ]);
  });

  it('ABADA-APL-NODE-002 duplicate node id', () => {
    expectError(
      PROC([
        '  - { id: a, type: service, topic: t, next: a2 }',
        '  - { id: a2, type: end }',
        '  - { id: a, type: end }',
      ]),
      'ABADA-APL-NODE-002',
      7,
    );
  });

  it('ABADA-APL-NODE-003 missing next on a non-end node', () => {
    expectError(
      PROC(['  - { id: a, type: service, topic: t }', '  - { id: b, type: end }']),
      'ABADA-APL-NODE-003',
      5,
    );
  });

  it('ABADA-APL-NODE-004 unreachable node', () => {
    const e = expectError(
      PROC([
        '  - { id: a, type: service, topic: t, next: b }',
        '  - { id: orphan, type: user_task, candidate_groups: [x], next: b }',
        '  - { id: b, type: end }',
      ]),
      'ABADA-APL-NODE-004',
      6,
    );
    expect(e.path).toBe('documents[0].nodes[1]');
  });

  it('ABADA-APL-SCHEMA-001 invalid JSON Schema in output_schema', () => {
    expectError(
      processWith({ agentExtra: '    output_schema: { type: objekt }\n' }),
      'ABADA-APL-SCHEMA-001',
      11,
    );
    expectError(
      processWith({ agentExtra: '    output_schema: { $ref: "#/nope" }\n' }),
      'ABADA-APL-SCHEMA-001',
      11,
    );
    expectError(processWith({ agentExtra: '    output_schema: [1]\n' }), 'ABADA-APL-SCHEMA-001', 11);
    const ok = `    output_schema:\n      $schema: https://json-schema.org/draft/2020-12/schema\n      type: array\n      prefixItems: [{ type: string }]\n`;
    expect(errorsOf(processWith({ agentExtra: ok }))).toEqual([]);
  });

  it('ABADA-APL-VAR-001 an undeclared ${name} in prompt or inputs', () => {
    const src = processWith({ agentExtra: '    inputs:\n      x: "${amount} ${ammount}"\n' }).replace(
      'Handle ${amount}',
      'Handle ${customer.id}',
    );
    const errors = errorsOf(src);
    expect(errors.map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-VAR-001', 9, 'documents[0].nodes[0].prompt'],
      ['ABADA-APL-VAR-001', 12, 'documents[0].nodes[0].inputs.x'],
    ]);
    expect(errors[1].message).toContain('Did you mean "amount"');
    expectError(processWith().replace('Handle ${amount}', 'Handle ${amount'), 'ABADA-APL-VAR-001', 9);
  });

  it('ABADA-APL-VAR-002 bad variable type, ABADA-APL-VAR-003 unknown output', () => {
    expectError(processWith().replace('{ type: number }', '{ type: int }'), 'ABADA-APL-VAR-002', 3);
    const withOutputs = processWith().replace('key: p1', 'key: p1\noutputs: [out, nope]');
    expectError(withOutputs, 'ABADA-APL-VAR-003', 3, ctx(), 'documents[0].outputs[1]');
  });

  it('ABADA-APL-EXPR-001 an approval.when that does not parse', () => {
    const src = lines(
      'kind: ToolServer',
      'name: s',
      'transport: streamable-http',
      'url: http://x/mcp',
      'tools:',
      '  pay:',
      '    policy: approval_required',
      '    approvers: [finance]',
      '    approval:',
      '      - { when: "amount > 1000", levels: [finance, [cfo, ceo]] }',
      '      - when: "amount >> 5"',
      '        levels: [cfo]',
    );
    const e = expectError(src, 'ABADA-APL-EXPR-001', 11, ctx(), 'documents[0].tools.pay.approval[1].when');
    expect(e.message).toContain('character');
  });

  it('ABADA-APL-LIMIT-001 non-positive limits, attempts, thresholds out of range', () => {
    const src = processWith({
      agentExtra:
        '    max_attempts: 0\n    confidence_threshold: 150\n    limits: { max_turns: 0, max_tokens_total: -1, budget_usd: 0 }\n',
    });
    const errors = errorsOf(src);
    expect(errors.map((e) => [e.code, e.line, e.path.replace('documents[0].nodes[0].', '')])).toEqual([
      ['ABADA-APL-LIMIT-001', 11, 'max_attempts'],
      ['ABADA-APL-LIMIT-001', 12, 'confidence_threshold'],
      ['ABADA-APL-LIMIT-001', 13, 'limits.max_turns'],
      ['ABADA-APL-LIMIT-001', 13, 'limits.max_tokens_total'],
      ['ABADA-APL-LIMIT-001', 13, 'limits.budget_usd'],
    ]);
  });

  it('ABADA-APL-REDACT-001 a malformed redact path', () => {
    const src = lines(
      'kind: ToolServer',
      'name: s',
      'transport: streamable-http',
      'url: http://x/mcp',
      'tools:',
      '  t:',
      '    policy: read',
      '    redact: [card.number, "a..b"]',
    );
    expectError(src, 'ABADA-APL-REDACT-001', 8, ctx(), 'documents[0].tools.t.redact[1]');
  });

  it('collects errors across documents and reports them in line order', () => {
    const src = `${lines('kind: ToolServer', 'name: s', 'transport: carrier-pigeon', 'tools: {}')}---\n${processWith({ agentExtra: '    max_attempts: -2\n    colour: red\n' })}`;
    const errors = errorsOf(src, ctx({ allowedModels: ['x'] }));
    expect(errors.map((e) => [e.code, e.line])).toEqual([
      ['ABADA-APL-DOC-002', 3],
      ['ABADA-APL-MODEL-001', 13],
      ['ABADA-APL-LIMIT-001', 16],
      ['ABADA-APL-DOC-003', 17],
    ]);
  });

  it('rejects prototype-polluting names without touching prototypes', () => {
    const src = processWith().replace(
      '{ amount: { type: number } }',
      '{ __proto__: { type: number }, constructor: { type: string } }',
    );
    const errors = errorsOf(src);
    expect(errors.filter((e) => e.code === 'ABADA-APL-DOC-002')).toHaveLength(2);
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });

  it('caps the error list at 100', () => {
    const nodes = Array.from({ length: 300 }, (_, i) => `  - { id: n${i}, type: service, topic: t, nxt: x }`);
    const errors = errorsOf(PROC(nodes));
    expect(errors).toHaveLength(100);
  });
});
