/**
 * A folder's face names what it offers (STYLE.md): every `server/engine/<folder>/index.ts` lists its
 * exports by name (no `export *`), and every name it exports is imported from outside the folder by
 * the rest of the server, the bench, the soak or the scripts. What only tests need of a folder's
 * insides is exported by its `testing.ts`, and each of those names is used by a test.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ENGINE = path.join(ROOT, 'server/engine');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return f === 'node_modules' ? [] : files(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

const parse = (file: string) =>
  ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);

/** The engine's folders that have a face: `server/engine/<folder>/index.ts`. */
const FOLDERS = readdirSync(ENGINE).filter((f) => {
  try {
    return statSync(path.join(ENGINE, f, 'index.ts')).isFile();
  } catch {
    return false;
  }
});

/** Names a module exports by name, and whether it has an `export *`. */
function exportsOf(file: string): { names: string[]; star: boolean } {
  const names: string[] = [];
  let star = false;
  for (const s of parse(file).statements) {
    if (ts.isExportDeclaration(s)) {
      if (!s.exportClause) star = true;
      else if (ts.isNamedExports(s.exportClause))
        names.push(...s.exportClause.elements.map((e) => e.name.text));
      else star = true;
    }
  }
  return { names, star };
}

/** Every name imported from `target` (a folder's index.js or testing.js) by the files given. */
function importedFrom(target: string, from: string[]): Set<string> {
  const out = new Set<string>();
  for (const file of from) {
    for (const s of parse(file).statements) {
      const spec =
        (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
        s.moduleSpecifier &&
        ts.isStringLiteral(s.moduleSpecifier)
          ? s.moduleSpecifier.text
          : null;
      if (!spec?.startsWith('.')) continue;
      const resolved = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
      if (resolved !== target) continue;
      if (ts.isImportDeclaration(s)) {
        const b = s.importClause?.namedBindings;
        if (b && ts.isNamedImports(b)) for (const e of b.elements) out.add((e.propertyName ?? e.name).text);
        if (b && ts.isNamespaceImport(b)) out.add('*');
      } else if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) {
        for (const e of s.exportClause.elements) out.add((e.propertyName ?? e.name).text);
      }
    }
  }
  return out;
}

const outside = (folder: string, roots: string[]) =>
  roots
    .flatMap((r) => files(path.join(ROOT, r)))
    .filter((f) => !f.startsWith(path.join(ENGINE, folder) + path.sep));

describe("the engine's folders name what they offer", () => {
  it('no index.ts has an export *', () => {
    expect(FOLDERS.filter((f) => exportsOf(path.join(ENGINE, f, 'index.ts')).star)).toEqual([]);
  });

  it('every name an index.ts exports is imported from outside its folder', () => {
    const unused: string[] = [];
    for (const f of FOLDERS) {
      const face = path.join(ENGINE, f, 'index.ts');
      const used = importedFrom(face, outside(f, ['server', 'bench', 'soak', 'scripts']));
      for (const name of exportsOf(face).names) if (!used.has(name)) unused.push(`${f}: ${name}`);
    }
    expect(unused, 'export these from testing.ts if only tests need them, or not at all').toEqual([]);
  });

  it('every name a testing.ts exports is used by a test', () => {
    const unused: string[] = [];
    for (const f of FOLDERS) {
      const face = path.join(ENGINE, f, 'testing.ts');
      let names: string[];
      try {
        names = exportsOf(face).names;
      } catch {
        continue;
      }
      const used = importedFrom(face, files(path.join(ROOT, 'test')));
      for (const name of names) if (!used.has(name)) unused.push(`${f}: ${name}`);
    }
    expect(unused).toEqual([]);
  });
});
