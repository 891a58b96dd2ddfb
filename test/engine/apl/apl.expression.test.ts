import { describe, expect, it } from 'vitest';
import { matchesRule } from '../../../server/engine/definitions/index.js';
import { evaluate, parseExpression } from '../../../server/engine/definitions/testing.js';

const args = {
  amount: 1500,
  currency: 'EUR',
  customer: { tier: 'Gold', id: 'c-1' },
  items: [{ price: 10 }, { price: 25.5 }],
  flag: true,
  none: null,
};

function run(src: string, a: unknown = args): unknown {
  const p = parseExpression(src);
  if (!p.ok) throw new Error(`${src}: ${p.message} @${p.position}`);
  return evaluate(p.ast, a);
}

describe('APL expressions: evaluation table', () => {
  const table: [string, unknown][] = [
    ['amount > 1000', true],
    ['amount >= 1500', true],
    ['amount < 1500', false],
    ['amount <= 1500.0', true],
    ['amount == 1500', true],
    ['amount != 1500', false],
    ['currency == "EUR"', true],
    ["currency == 'USD'", false],
    ['customer.tier == "Gold"', true],
    ['lower(customer.tier) == "gold"', true],
    ['items[1].price', 25.5],
    ['items[0].price + items[1].price', 35.5],
    ['amount * 2 - 1000 / 4', 2750],
    ['-amount', -1500],
    ['(1 + 2) * 3', 9],
    ['1 + 2 * 3', 7],
    ['len(items)', 2],
    ['len(currency)', 3],
    ['len(customer)', 2],
    ['currency in ["EUR", "GBP"]', true],
    ['currency not in ["EUR", "GBP"]', false],
    ['3 in [1, 2]', false],
    ['amount > 1000 && currency == "EUR"', true],
    ['amount > 1000 and currency == "USD"', false],
    ['amount > 5000 || flag', true],
    ['amount > 5000 or not flag', false],
    ['!flag', false],
    ['not (amount > 1000)', false],
    ['true && !false', true],
    ['null == null', true],
    ['"a" + "b"', 'ab'],
    ['"b" > "a"', true],
    ['1e3 == 1000', true],
    ['"it\\\'s" == "it\'s"', true],
    // missing paths are null; comparisons with null are false
    ['missing', null],
    ['missing > 0', false],
    ['missing < 0', false],
    ['none >= 0', false],
    ['customer.address.city == "x"', false],
    ['items[9].price > 1', false],
    ['missing == null', true],
    // type errors yield null or false, never throw
    ['currency > 5', false],
    ['currency * 2', null],
    ['amount / 0', null],
    ['len(amount)', null],
    ['lower(amount)', null],
    ['flag + 1', null],
    ['currency in "EUR"', false],
    ['customer < customer', false],
  ];
  for (const [src, expected] of table) {
    it(`${src} → ${JSON.stringify(expected)}`, () => {
      expect(run(src)).toEqual(expected);
    });
  }

  it('matchesRule is true only for boolean true', () => {
    expect(matchesRule('amount > 1000', args)).toBe(true);
    expect(matchesRule('amount > 1000', { amount: 10 })).toBe(false);
    expect(matchesRule('amount', args)).toBe(false);
    expect(matchesRule('amount >', args)).toBe(false);
    expect(matchesRule('amount > 1', 'not an object')).toBe(false);
    expect(matchesRule('amount > 1', null)).toBe(false);
  });
});

describe('APL expressions: rejection and hostile input', () => {
  const bad = [
    '',
    '   ',
    'amount >',
    'amount >> 5',
    '(amount > 1',
    'amount > 1)',
    '"unterminated',
    'eval("1")',
    'constructor()',
    'amount = 5',
    'a.',
    'items[x]',
    '1abc',
    'amount ? 1 : 2',
    '@',
    'and',
    `${'('.repeat(40)}1${')'.repeat(40)}`,
    `${'!'.repeat(40)}true`,
    `${'-'.repeat(40)}1`,
    `amount > ${'1'.repeat(1001)}`,
    'x'.repeat(1001),
  ];
  for (const src of bad) {
    it(`rejects ${JSON.stringify(src.slice(0, 30))}`, () => {
      const r = parseExpression(src);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.message.length).toBeGreaterThan(0);
        expect(r.position).toBeGreaterThanOrEqual(0);
      }
    });
  }

  it('reports the position of the problem', () => {
    const r = parseExpression('amount > 1000 &&');
    expect(r).toMatchObject({ ok: false, position: 16 });
  });

  it('accepts nesting up to the limit', () => {
    expect(parseExpression(`${'('.repeat(20)}1${')'.repeat(20)}`).ok).toBe(true);
  });

  it('never reaches prototypes through constructor or __proto__ paths', () => {
    for (const src of [
      'constructor',
      'constructor.name',
      '__proto__',
      '__proto__.polluted',
      'customer.constructor',
      'customer.__proto__',
      'items.constructor',
      'amount.constructor',
      'currency.length',
      'items.length',
      'toString',
      'customer.hasOwnProperty',
      'items["constructor"]',
    ]) {
      expect(run(src), src).toBeNull();
    }
    expect(run('__proto__ == null')).toBe(true);
    expect(run('len(constructor)')).toBeNull();
    // own data named __proto__ is plain data
    const own = JSON.parse('{"__proto__": {"x": 1}}');
    expect(run('__proto__.x', own)).toBe(1);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('does not evaluate code or throw on odd argument values', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(run('self.self.self.a', cyclic)).toBe(1);
    expect(run('self == self', cyclic)).toBe(true);
    const getterThrows = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(run('x > 1', getterThrows)).toBe(false);
    const parsed = parseExpression('amount > 1');
    expect(parsed.ok && evaluate(parsed.ast, undefined)).toBe(false);
    expect(run('amount > 1', 42)).toBe(false);
  });
});
