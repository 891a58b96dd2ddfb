import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The dashboard is served by the engine's own HTTP server (server/web.ts), on the engine's port. */
export default {
  reactStrictMode: true,
  poweredByHeader: false,
  // node_modules live at the repository root, one level up.
  turbopack: { root: path.join(here, '..') },
  outputFileTracingRoot: path.join(here, '..'),
};
