/**
 * The dark theme changes colours only: one `prefers-color-scheme: dark` block, in web/app/globals.css,
 * whose declarations set colour variables and colour properties. The dashboard's axe pass relies on it
 * (test/e2e/a11y.ts): in the dark scheme it runs only the rules that read colours, since the page is
 * otherwise the one the light pass checked in full.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const COLOUR_PROPERTIES = new Set(['color', 'background', 'background-color', 'border-color']);

/** The text between the braces that open at `from` (the index of its `{`). */
function block(text: string, from: number): string {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(from + 1, i);
  }
  throw new Error('unbalanced braces');
}

describe('the dark theme', () => {
  it('is declared in globals.css only', () => {
    const sources = execFileSync('git', ['ls-files', 'web'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(css|tsx?|mjs)$/.test(f));
    const naming = sources.filter((f) =>
      readFileSync(path.join(ROOT, f), 'utf8').includes('prefers-color-scheme'),
    );
    expect(naming).toEqual(['web/app/globals.css']);
  });

  it('sets colours and nothing else', () => {
    const css = readFileSync(path.join(ROOT, 'web/app/globals.css'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const at = css.indexOf('@media (prefers-color-scheme: dark)');
    expect(at).toBeGreaterThan(0);
    const body = block(css, css.indexOf('{', at));
    const properties = [...body.matchAll(/([\w-]+)\s*:\s*[^;{}]+;/g)].map((m) => m[1]);
    expect(properties.length).toBeGreaterThan(20);
    const other = properties.filter((p) => !p.startsWith('--') && !COLOUR_PROPERTIES.has(p));
    expect(other).toEqual([]);
  });
});
