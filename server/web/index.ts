/**
 * The dashboard as the engine serves it: the handler that answers from the first moment
 * (`startDashboard`), and the build it waits for (`startWebBuild`, `webIsBuilt`).
 */
export { startWebBuild, WebBuildError, webIsBuilt } from './build.js';
export { type Dashboard, type DemoUser, startDashboard } from './handler.js';
export { webSourceHash } from './source-hash.js';
