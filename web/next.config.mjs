import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The dashboard is served by the engine's own HTTP server (server/web/), on the engine's port, and built
 * by server/web/build.ts. The build that start-up makes skips Next's type check (ABADA_WEB_TYPECHECK=0):
 * `npm test` type-checks the dashboard anyway (`tsc --noEmit -p web`); `npm run web:build` keeps it.
 */
export default {
  reactStrictMode: true,
  poweredByHeader: false,
  // node_modules live at the repository root, one level up.
  turbopack: { root: path.join(here, '..') },
  outputFileTracingRoot: path.join(here, '..'),
  typescript: { ignoreBuildErrors: process.env.ABADA_WEB_TYPECHECK === '0' },
};
