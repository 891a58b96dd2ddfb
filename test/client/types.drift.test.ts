/**
 * The typed documents follow schema.graphql only while the generated introspection files do: both are
 * regenerated here and compared with the committed ones (`npm run client:types` / `npm run web:types`
 * and commit when this fails). The tests' string documents are validated against the schema as well.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateOutput } from '@gql.tada/cli-utils';
import { buildSchema, parse, print, validate } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { Q } from '../helpers/fixtures.js';

const root = path.resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(path.join(tmpdir(), 'abada-tada-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function regenerated(tsconfig: string, name: string): Promise<string> {
  const output = path.join(tmp, `${name}.d.ts`);
  await generateOutput({ tsconfig: path.join(root, tsconfig), output, silent: true });
  return readFileSync(output, 'utf8');
}

describe('generated GraphQL introspection', () => {
  it('server/client/graphql-env.d.ts matches schema.graphql (npm run client:types)', async () => {
    const committed = readFileSync(path.join(root, 'server/client/graphql-env.d.ts'), 'utf8');
    expect(committed).toBe(await regenerated('tsconfig.json', 'client'));
  });

  it('web/graphql-env.d.ts matches schema.graphql (npm run web:types)', async () => {
    const committed = readFileSync(path.join(root, 'web/graphql-env.d.ts'), 'utf8');
    expect(committed).toBe(await regenerated('web/tsconfig.json', 'web'));
  });
});

describe("the tests' own documents", () => {
  // test/helpers/fixtures.ts keeps selections of its own (fields a worker never reads, asserted by the
  // engine tests); they are strings, so they are checked against the schema here instead of by tsc.
  it('are valid against schema.graphql', () => {
    const schema = buildSchema(readFileSync(path.join(root, 'schema.graphql'), 'utf8'));
    for (const [name, doc] of Object.entries(Q))
      expect(validate(schema, parse(print(doc))), name).toEqual([]);
  });
});
