import type http from 'node:http';
import type { EngineContext } from '../engine/common/index.js';
import { bearerToken, constantTimeEqual } from '../engine/principals/index.js';
import type { Logger } from '../log.js';
import type { EngineMetrics } from './render.js';

/** GET /metrics; with ABADA_METRICS_TOKEN set, only `Authorization: Bearer <that token>` may read it. */
export function serveMetrics(
  metrics: EngineMetrics,
  ctx: EngineContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  log: Logger,
) {
  const token = ctx.config.metricsToken;
  const given = bearerToken(req.headers.authorization);
  if (token && (given === null || !constantTimeEqual(given, token))) {
    res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' });
    res.end('Send Authorization: Bearer <ABADA_METRICS_TOKEN>.\n');
    return;
  }
  metrics
    .render(ctx)
    .then((body) => {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(body);
    })
    .catch((e) => {
      log.error({ err: e }, 'metrics scrape failed');
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('metrics unavailable: database unreachable\n');
    });
}
