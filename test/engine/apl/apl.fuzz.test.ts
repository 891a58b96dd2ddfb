import { describe, expect, it } from 'vitest';
import { validateSource, type ValidationResult } from '../../../server/engine/definitions/testing.js';
import { ctx, SPEC_EXAMPLE } from './fixtures.js';

/** mulberry32: a small seeded PRNG, so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOISE = [
  ':',
  '-',
  '[',
  ']',
  '{',
  '}',
  '"',
  "'",
  '#',
  '&a',
  '*a',
  '!!str',
  '\t',
  '${',
  '|',
  '>',
  ' ',
  '\n',
  '---',
  '\u0000',
  '🙂',
  'null',
  '0',
  '-1',
  'delegate:x',
];

function mutate(src: string, rnd: () => number): string {
  let lines = src.split('\n');
  const ops = 1 + Math.floor(rnd() * 4);
  for (let k = 0; k < ops; k++) {
    const i = Math.floor(rnd() * lines.length);
    const op = Math.floor(rnd() * 7);
    if (op === 0) lines.splice(i, 1);
    else if (op === 1) lines.splice(i, 0, lines[Math.floor(rnd() * lines.length)] ?? '');
    else if (op === 2) lines[i] = lines[Math.floor(rnd() * lines.length)] ?? '';
    else {
      const line = lines[i] ?? '';
      const pos = Math.floor(rnd() * (line.length + 1));
      const noise = NOISE[Math.floor(rnd() * NOISE.length)];
      if (op === 3) lines[i] = line.slice(0, pos) + line.slice(pos + 1);
      else if (op === 4) lines[i] = line.slice(0, pos) + noise + line.slice(pos);
      else if (op === 5) lines[i] = line.slice(0, pos) + noise + line.slice(pos + 1);
      else lines = lines.map((l) => (rnd() < 0.1 ? l.replace(/^(\s*)/, '$1 ') : l));
    }
  }
  return lines.join('\n');
}

function check(result: ValidationResult, source: string): void {
  if (result.ok) {
    expect(result.deployment.processes.length + result.deployment.toolServers.length).toBeGreaterThan(0);
    return;
  }
  expect(result.errors.length, source).toBeGreaterThan(0);
  expect(result.errors.length).toBeLessThanOrEqual(100);
  const lineCount = source.split('\n').length;
  for (const e of result.errors) {
    expect(e.code, JSON.stringify(e)).toMatch(/^ABADA-APL-[A-Z]+-\d{3}$/);
    expect(e.code).not.toBe('ABADA-APL-INTERNAL-001');
    expect(typeof e.path).toBe('string');
    expect(e.message.length).toBeGreaterThan(10);
    if (e.line !== null) {
      expect(e.line).toBeGreaterThanOrEqual(1);
      expect(e.line).toBeLessThanOrEqual(lineCount + 1);
    }
  }
}

describe('APL fuzzing', () => {
  it('never throws on 500 mutated documents and always gives coded errors', () => {
    const rnd = prng(20240917);
    const t0 = Date.now();
    let failures = 0;
    const context = ctx({
      allowedModels: ['gemini-3.6-flash', 'gpt-4.1-mini'],
      processKeys: new Set(['kyc']),
    });
    for (let n = 0; n < 500; n++) {
      const source = mutate(SPEC_EXAMPLE, rnd);
      let result: ValidationResult | undefined;
      expect(() => {
        result = validateSource(source, context);
      }, source).not.toThrow();
      check(result as ValidationResult, source);
      if (!(result as ValidationResult).ok) failures++;
    }
    expect(failures).toBeGreaterThan(100);
    expect(Date.now() - t0).toBeLessThan(60_000); // a guard against blow-ups, not a timing test (machines are noisy);
  });

  it('survives hostile inputs', () => {
    const deepBlock = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}- `).join('\n');
    const hostile: unknown[] = [
      '',
      '\u0000\u0001\u0002\uffff',
      Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 7919) % 256)).toString('latin1'),
      '42',
      '- a\n- b',
      'null',
      '[[[[',
      `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
      `${'{a: '.repeat(5000)}1${'}'.repeat(5000)}`,
      deepBlock,
      `a: &x [${'1,'.repeat(50)}]\nb: [${'*x,'.repeat(5000)}]`,
      'kind: Process\nkey: x\n'.repeat(2000),
      `kind: Process\nkey: k\nstart: a\nnodes:\n${'  - { id: a, type: end }\n'.repeat(20_000)}`,
      `kind: ToolServer\nname: s\ntransport: stdio\ncommand: x\ntools:\n${Array.from({ length: 3000 }, (_, i) => `  t${i}: { policy: approval_required, approval: [{ when: "${'('.repeat(i % 50)}", levels: [a] }] }`).join('\n')}`,
      'kind: Process\n__proto__: { polluted: true }\nconstructor: 1',
      '? [complex, key]\n: value',
      '!!binary aGVsbG8=',
      'kind: !!js/function "function(){}"',
      'x'.repeat(2 * 1024 * 1024),
      undefined,
      null,
      12,
    ];
    for (const source of hostile) {
      const t0 = Date.now();
      let result: ValidationResult | undefined;
      expect(() => {
        result = validateSource(source as string, ctx());
      }).not.toThrow();
      expect(result?.ok).toBe(false);
      if (result && !result.ok) {
        expect(result.errors.length).toBeGreaterThan(0);
        expect(result.errors.length).toBeLessThanOrEqual(100);
        for (const e of result.errors) expect(e.code).toMatch(/^ABADA-APL-[A-Z]+-\d{3}$/);
      }
      expect(Date.now() - t0).toBeLessThan(20_000); // refused cheaply: no input makes validation hang;
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
