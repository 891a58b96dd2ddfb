/**
 * The dashboard as the engine serves it: the handler that answers from the first moment
 * (`startDashboard`), and the build it waits for (`startWebBuild`, `buildWeb`, `webIsBuilt`).
 */
export {
  type BuildOptions,
  type BuildState,
  buildWeb,
  ROOT,
  startWebBuild,
  type WebBuild,
  WebBuildError,
  webIsBuilt,
} from './build.js';
export { type Dashboard, type DemoUser, startDashboard, type WebOptions } from './handler.js';
export { webSourceHash } from './source-hash.js';
