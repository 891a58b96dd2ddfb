import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The dashboard is served by the engine's own HTTP server (server/web/), on the engine's port, and built
 * by server/web/build.ts. The build leaves out what made a newcomer's first start slow and served nobody
 * (two cores, four alternating builds each, docs/decisions.md):
 * - Next's type check, which `npm test` runs anyway (`tsc --noEmit -p web`): the start build sets
 *   ABADA_WEB_TYPECHECK=0, `npm run web:build` keeps the check. It was 10.6 s of a 31.6 s build.
 * - source maps: 6 % of the build's CPU (median 44.7 → 42.0 s), 14 MB of output.
 * - minified server code, which runs in the engine's process and is never downloaded: 13 % more
 *   (42.0 → 36.5 s). The browser's code stays minified.
 */
export default {
  reactStrictMode: true,
  poweredByHeader: false,
  // node_modules live at the repository root, one level up.
  turbopack: { root: path.join(here, '..') },
  outputFileTracingRoot: path.join(here, '..'),
  typescript: { ignoreBuildErrors: process.env.ABADA_WEB_TYPECHECK === '0' },
  experimental: {
    turbopackSourceMaps: false,
    turbopackMinify: { server: false, client: true },
  },
};
