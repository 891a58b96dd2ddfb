/**
 * The programs the tests start as processes — the Agent Worker, the `abada` CLI, the MCP conformance
 * client — bundled once per run by the global set-up. Started as `node --import tsx file.ts`, each process
 * resolved and transformed its few hundred modules through tsx's hooks: about 2 s of CPU a start, and the
 * suite starts a few hundred. A bundle is the same source compiled by the same esbuild tsx uses, in one
 * file: about 0.6 s. The npm scripts (`npm run worker`, bin/abada.mjs) keep tsx; test/ops/cli.test.ts runs
 * the real bin.
 *
 * The bundles sit two folders below the checkout (test-results/bundles/), as server/<folder>/ files do, so
 * the paths modules compute from import.meta.url (the checkout, drizzle/) land where they would, and bare
 * imports resolve from the checkout's node_modules.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { inject } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

export type BundleName = 'worker' | 'cli' | 'conformanceClient';

/** What each bundle runs: a file, or a module's text (the CLI's `main` run as bin/abada.mjs runs it). */
const ENTRIES: Record<BundleName, { file: string } | { contents: string }> = {
  worker: { file: 'server/worker/main.ts' },
  cli: {
    contents:
      "import { main } from './server/cli.ts';\nprocess.exitCode = await main(process.argv.slice(2));\n",
  },
  conformanceClient: { file: 'test/worker/conformance/client.ts' },
};

declare module 'vitest' {
  export interface ProvidedContext {
    bundles: Record<BundleName, string>;
  }
}

/** Builds every bundle for this run (the global set-up's); returns their paths and a clean-up. */
export async function buildBundles(): Promise<{ paths: Record<BundleName, string>; remove(): void }> {
  const dir = path.join(ROOT, 'test-results/bundles');
  mkdirSync(dir, { recursive: true });
  const paths = {} as Record<BundleName, string>;
  await Promise.all(
    (Object.keys(ENTRIES) as BundleName[]).map(async (name) => {
      const entry = ENTRIES[name];
      const outfile = path.join(dir, `${name}-${process.pid}.mjs`);
      await build({
        ...('file' in entry
          ? { entryPoints: [path.join(ROOT, entry.file)] }
          : {
              stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'ts', sourcefile: `${name}.ts` },
            }),
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        keepNames: true,
        logLevel: 'warning',
      });
      paths[name] = outfile;
    }),
  );
  const remove = () => {
    for (const p of Object.values(paths)) rmSync(p, { force: true });
  };
  return { paths, remove };
}

/** The `node` arguments that start a bundled program (in a test file, after the global set-up). */
export const bundled = (name: BundleName): string[] => [inject('bundles')[name]];
