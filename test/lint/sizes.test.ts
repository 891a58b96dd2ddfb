/**
 * The sizes STYLE.md asks for, checked: no source file over 400 lines, no function in server/ over 80
 * lines (counted from its first to its last line, comments inside included). Generated files (the
 * gql.tada introspection output) are not source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
const GENERATED = /(graphql-env\.d\.ts|introspection\.ts|\.d\.ts)$/;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (['node_modules', '.next', 'fixtures', 'results'].includes(e.name)) continue;
      out.push(...sources(rel));
    } else if (/\.(ts|tsx)$/.test(e.name) && !GENERATED.test(e.name)) out.push(rel);
  }
  return out;
}

/** Functions (declarations, methods, arrows, function expressions) longer than the limit. */
function longFunctions(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (end - start + 1 > MAX_FUNCTION_LINES) {
        const name = (node as { name?: ts.Node }).name?.getText(sf) ?? '(anonymous)';
        found.push(`${file}:${start + 1} ${name} (${end - start + 1} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('sizes', () => {
  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const files = ['server', 'web', 'bench', 'soak', 'scripts', 'test'].flatMap(sources);
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > MAX_FILE_LINES)
      .map(([f, n]) => `${f} (${n} lines)`);
    expect(over).toEqual([]);
  });

  it(`no function in server/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(sources('server').flatMap(longFunctions)).toEqual([]);
  });
});
