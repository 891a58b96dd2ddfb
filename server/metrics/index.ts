export { EngineMetrics } from './render.js';
export { serveMetrics } from './serve.js';
