import { describe, expect, it } from 'vitest';
import { parseRedactPath, redactArguments } from '../../../server/engine/definitions/index.js';

describe('APL redaction', () => {
  const args = {
    amount: 90,
    card: { number: '4111111111111111', holder: 'Ada' },
    items: [{ iban: 'DE1', qty: 1 }, { qty: 2 }, { iban: 'FR2' }],
    tags: ['a', 'b'],
  };

  it('redacts dotted and list paths, reports concrete paths, never mutates the input', () => {
    const before = structuredClone(args);
    const { view, redactedPaths } = redactArguments(args, [
      'card.number',
      'items[].iban',
      'missing.path',
      'tags[1]',
    ]);
    expect(view).toEqual({
      amount: 90,
      card: { number: '[redacted]', holder: 'Ada' },
      items: [{ iban: '[redacted]', qty: 1 }, { qty: 2 }, { iban: '[redacted]' }],
      tags: ['a', '[redacted]'],
    });
    expect(redactedPaths).toEqual(['card.number', 'items[0].iban', 'items[2].iban', 'tags[1]']);
    expect(args).toEqual(before);
    (view as { card: { holder: string } }).card.holder = 'changed';
    expect(args.card.holder).toBe('Ada');
  });

  it('redacts whole subtrees and every element', () => {
    expect(redactArguments(args, ['card']).view).toMatchObject({ card: '[redacted]' });
    expect(redactArguments({ list: [1, 2] }, ['list[]'])).toEqual({
      view: { list: ['[redacted]', '[redacted]'] },
      redactedPaths: ['list[0]', 'list[1]'],
    });
    expect(redactArguments([{ a: 1 }, { a: 2 }], ['[].a']).redactedPaths).toEqual(['[0].a', '[1].a']);
  });

  it('redacts a null value that is present, skips absent keys and type mismatches', () => {
    expect(redactArguments({ a: null }, ['a'])).toEqual({ view: { a: '[redacted]' }, redactedPaths: ['a'] });
    expect(redactArguments({ a: 'x' }, ['a.b', 'a[]', 'b']).redactedPaths).toEqual([]);
    expect(redactArguments(null, ['a']).view).toBeNull();
    expect(redactArguments('text', ['a']).view).toBe('text');
  });

  it('does not follow prototypes', () => {
    const r = redactArguments({ a: 1 }, ['constructor.name', '__proto__.x', 'toString']);
    expect(r.redactedPaths).toEqual([]);
    expect(Object.getPrototypeOf({}).x).toBeUndefined();
    const own = JSON.parse('{"__proto__": {"x": 1}}');
    const o = redactArguments(own, ['__proto__.x']);
    expect(o.redactedPaths).toEqual(['__proto__.x']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('parses and rejects paths', () => {
    expect(parseRedactPath('items[].iban')).toEqual([{ key: 'items' }, { each: true }, { key: 'iban' }]);
    expect(parseRedactPath('a[0][]')).toEqual([{ key: 'a' }, { index: 0 }, { each: true }]);
    for (const bad of ['', 'a..b', '.a', 'a.', 'a[x]', 'a b', 'a.[]', 'a[', 'x'.repeat(300)]) {
      expect(parseRedactPath(bad), bad).toBeNull();
    }
  });
});
