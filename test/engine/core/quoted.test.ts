/**
 * The journal's statements carry their JSON as dollar-quoted constants (`quoted`, journal/sql.ts): PostgreSQL
 * must read back exactly the text that was sent, whatever it holds — quotes, backslashes, a `$`, the tag
 * itself — and a tag in the text must never end the constant early.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { literal, quoted } from '../../../server/engine/journal/index.js';
import { createTestDatabase } from '../../helpers/db.js';

let db: pg.Client;

beforeAll(async () => {
  db = new pg.Client({ connectionString: await createTestDatabase() });
  await db.connect();
});
afterAll(() => db?.end());

const TEXTS = [
  '',
  'plain',
  `it's a "quote" and a back\\slash \\' and \\\\`,
  'ends with a dollar $',
  '$',
  '$$',
  '$j$',
  'a $j$ inside, and $j0$ too; $j1$',
  "'); DROP TABLE history; --",
  JSON.stringify({ text: 'line\nbreak\ttab \u00e9 \u{1F600} \u0001', tag: '$j$', nested: { a: ["$j0$'"] } }),
];

describe('quoted: a dollar-quoted constant PostgreSQL reads back as sent', () => {
  it.each(TEXTS.map((t) => [t]))('%j', async (text) => {
    const r = await db.query(`SELECT ${quoted(text)}::text AS v, ${literal(text)}::text AS w`);
    expect(r.rows[0]).toEqual({ v: text, w: text });
  });

  it('picks a tag the text does not contain', () => {
    expect(quoted('x')).toBe('$j$x$j$');
    expect(quoted('a $j$ b')).toBe('$j0$a $j$ b$j0$');
    expect(quoted('$j$ $j0$')).toBe('$j1$$j$ $j0$$j1$');
  });

  it('keeps JSON intact as jsonb', async () => {
    const value = { steps: [{ request: { q: 'it\'s $j$ \\ "x"' } }], n: 1 };
    const r = await db.query(`SELECT ${quoted(JSON.stringify(value))}::jsonb AS v`);
    expect(r.rows[0].v).toEqual(value);
  });

  it('NULL stays NULL and numbers are quoted for the statement to type', async () => {
    const r = await db.query(`SELECT ${literal(null)}::int AS a, ${literal(42)}::int AS b`);
    expect(r.rows[0]).toEqual({ a: null, b: 42 });
  });
});
