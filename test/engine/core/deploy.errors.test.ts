/**
 * APL errors reach the caller through the `deploy` mutation (SPEC §2, §9): VALIDATION_FAILED with
 * extensions.errors [{code, path, line, message}], and nothing deployed. The exhaustive per-code tests
 * live under test/engine/apl; this proves the GraphQL transport of representative ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { triageProcess } from './helpers.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine({
    env: { ABADA_AGENT_ALLOWED_MODELS: 'gemini-3.6-flash,gpt-4.1-mini', ABADA_AGENT_ALLOWED_TOOLS: 'crm' },
  });
});
afterAll(() => engine?.close());

const GOOD_PROCESS = triageProcess({ key: 'ok', topic: 't-ok' });

const withNode = (node: string) => `
kind: Process
key: broken
start: a
nodes:
${node}
  - { id: done, type: end }
`;

const CASES: { name: string; source: string; code: string; line?: number }[] = [
  { name: 'bad YAML', source: 'kind: Process\nkey: [unclosed\n', code: 'ABADA-APL-YAML-001' },
  {
    name: 'unknown server',
    source: `${CRM_SERVER()}---${GOOD_PROCESS.replace('crm/get_customer,', 'erp/get_customer,')}`,
    code: 'ABADA-APL-TOOL-001',
  },
  {
    name: 'unknown tool',
    source: `${CRM_SERVER()}---${GOOD_PROCESS.replace('crm/get_customer,', 'crm/get_customers,')}`,
    code: 'ABADA-APL-TOOL-002',
  },
  {
    name: 'model outside ABADA_AGENT_ALLOWED_MODELS',
    source: `${CRM_SERVER()}---${GOOD_PROCESS.replace('model: gemini-3.6-flash', 'model: gpt-5-ultra')}`,
    code: 'ABADA-APL-MODEL-001',
  },
  {
    name: 'server outside ABADA_AGENT_ALLOWED_TOOLS',
    source: `${CRM_SERVER().replace('name: crm', 'name: erp')}---${GOOD_PROCESS.replace('crm/get_customer,', 'erp/get_customer,').replace('crm/', 'crm/')}`,
    code: 'ABADA-APL-TOOL-005',
  },
  {
    name: 'unknown node reference',
    source: withNode('  - { id: a, type: service, topic: x, next: nowhere }'),
    code: 'ABADA-APL-NODE',
  },
];

describe('deploy refuses broken APL with coded errors', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const r = await engine.gql(engine.adminToken, Q.deploy, { s: c.source });
      expect(codeOf(r)).toBe('VALIDATION_FAILED');
      expect(r.data).toBeNull();
      const errors = r.errors![0].extensions!.errors as {
        code: string;
        path: string;
        line: number;
        message: string;
      }[];
      expect(errors.length).toBeGreaterThan(0);
      for (const e of errors) {
        expect(Object.keys(e)).toEqual(expect.arrayContaining(['code', 'path', 'line', 'message']));
        expect(e.code).toMatch(/^ABADA-APL-[A-Z]+-\d{3}$/);
        expect(typeof e.path).toBe('string');
        expect(Number.isInteger(e.line) && e.line >= 1).toBe(true);
        expect(e.message.length).toBeGreaterThan(5);
      }
      expect(errors.map((e) => e.code).some((code) => code.startsWith(c.code))).toBe(true);
    });
  }

  it('points at the offending line, reports every error at once, and deploys nothing', async () => {
    const source = `${CRM_SERVER()}---${GOOD_PROCESS.replace('crm/get_customer,', 'crm/nope,').replace('model: gemini-3.6-flash', 'model: gpt-5-ultra')}`;
    const r = await engine.gql(engine.adminToken, Q.deploy, { s: source });
    const errors = r.errors![0].extensions!.errors as { code: string; path: string; line: number }[];
    expect(errors.map((e) => e.code).sort()).toEqual(['ABADA-APL-MODEL-001', 'ABADA-APL-TOOL-002']);
    const lines = source.split('\n');
    const tool = errors.find((e) => e.code === 'ABADA-APL-TOOL-002')!;
    expect(lines[tool.line - 1]).toContain('crm/nope');
    const model = errors.find((e) => e.code === 'ABADA-APL-MODEL-001')!;
    expect(lines[model.line - 1]).toContain('gpt-5-ultra');
    const defs = await engine.ok(engine.adminToken, `{ definitions { key } toolServers { name } }`);
    expect(defs).toEqual({ definitions: [], toolServers: [] });
    // and the fixed source deploys
    const ok = await engine.ok(engine.adminToken, Q.deploy, { s: `${CRM_SERVER()}---${GOOD_PROCESS}` });
    expect(ok.deploy.definitions).toEqual([expect.objectContaining({ key: 'ok', version: 1 })]);
  });

  it('a source over the deploy limit is ABADA-APL-YAML-002, on no line, and deploys nothing', async () => {
    const source = `${GOOD_PROCESS}# ${'x'.repeat(512 * 1024)}\n`;
    const before = await engine.ok(engine.adminToken, `{ definitions { id } }`);
    const r = await engine.gql(engine.adminToken, Q.deploy, { s: source });
    expect(codeOf(r)).toBe('VALIDATION_FAILED');
    expect(r.errors![0].message).toMatch(/larger than 524288 bytes; split it/);
    expect(r.errors![0].extensions!.errors).toEqual([
      { code: 'ABADA-APL-YAML-002', path: '', line: null, message: 'Source too large.' },
    ]);
    expect(await engine.ok(engine.adminToken, `{ definitions { id } }`)).toEqual(before);
  });

  it('only an admin deploys', async () => {
    const human = await engine.principal('HUMAN', 'h', { groups: ['support'] });
    expect(codeOf(await engine.gql(human, Q.deploy, { s: GOOD_PROCESS }))).toBe('FORBIDDEN');
  });
});
