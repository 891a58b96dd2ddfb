/**
 * `npm run web:build`: the dashboard's production build with Next's own type check and its whole output,
 * even when the build is current — the same build `npm start` makes (under the same lock, recording the
 * same source hash, so the next start reuses it).
 */
import { startWebBuild } from '../server/web/index.js';

try {
  await startWebBuild({ typecheck: true, force: true, inheritOutput: true }).done;
} catch (e) {
  console.error(`[abada] ${(e as Error).message}`);
  process.exit(1);
}
