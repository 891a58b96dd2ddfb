/**
 * "Is the dashboard's build current" by content, not file times: a SHA-256 over every source file of web/
 * (path and bytes), schema.graphql (the dashboard's documents are checked against it), and the versions of
 * next, react and react-dom. A checkout, a `git stash` or a same-text rewrite leave it unchanged.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** What Next.js writes into web/ itself, or what is not a source: never part of the hash. */
const NOT_SOURCES = new Set(['.next', 'node_modules', 'next-env.d.ts']);
const isSource = (name: string) =>
  !NOT_SOURCES.has(name) && !name.endsWith('.tsbuildinfo') && !name.startsWith('.next-build');

/** The packages whose versions change the build's output, as the engine that serves it resolves them. */
const require = createRequire(import.meta.url);
const OUTPUT_PACKAGES = ['next', 'react', 'react-dom'];

function sourceFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (!isSource(e.name)) continue;
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...sourceFiles(dir, p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** The hash of what `next build web` in `root` would build from (hex). */
export function webSourceHash(root: string): string {
  const h = createHash('sha256');
  // Length-prefixed fields, so that no two different trees can feed the hash the same bytes.
  const field = (s: string | Buffer) => {
    h.update(`${Buffer.byteLength(s)}:`);
    h.update(s);
  };
  for (const name of OUTPUT_PACKAGES) {
    field(name);
    field((require(`${name}/package.json`) as { version: string }).version);
  }
  field('schema.graphql');
  field(readFileSync(path.join(root, 'schema.graphql')));
  const web = path.join(root, 'web');
  for (const file of sourceFiles(web).sort()) {
    field(`web/${file}`);
    field(readFileSync(path.join(web, file)));
  }
  return h.digest('hex');
}
