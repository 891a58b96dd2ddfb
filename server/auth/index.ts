/**
 * Signing people in (SPEC §12): the OpenID Connect relying party, the session cookie, the provider's access
 * tokens, and who a request or a graphql-ws connection is. The HTTP server asks `routes` first for /auth/*
 * and `identifier` for every GraphQL call; sessions are stored by engine/principals, never here.
 */
import type { EngineContext } from '../engine/common/index.js';
import { Identifier } from './identify.js';
import { OidcClient } from './oidc.js';
import { authRoutes } from './routes.js';

export type Auth = ReturnType<typeof createAuth>;

/** `origin` is read per request: with PORT=0 the port is known only once the server listens. */
export function createAuth(engine: EngineContext, origin: () => string, log: (e: unknown) => void) {
  const oidc = engine.config.oidc ? new OidcClient(engine.config.oidc) : null;
  const identifier = new Identifier(engine, oidc, origin);
  // half the refresh interval (at most a minute): no live session's groups are older than the interval
  const everyMs = Math.max(500, Math.min(60_000, ((engine.config.oidc?.refreshMinutes ?? 10) * 60_000) / 2));
  let running = false;
  const timer = oidc
    ? setInterval(() => {
        if (running) return;
        running = true;
        identifier
          .refreshDue()
          .catch(log)
          .finally(() => {
            running = false;
          });
      }, everyMs)
    : null;
  timer?.unref();
  return {
    identifier,
    routes: authRoutes({ engine, oidc, identifier, origin, log }),
    /** stops the background refresh of sessions' groups */
    stop: () => clearInterval(timer ?? undefined),
  };
}
