/**
 * The dashboard on the engine's own port: Next.js (`web/`) as startEngine's `web` handler. It exists at
 * once: the building page answers until the build is made (build.ts) and loaded, then Next.js takes over
 * in place; the engine never restarts nor waits. In demo mode it also serves `/demo/users.json` (the demo
 * users' names, roles and tokens for one-click sign-in); outside the demo that path is a plain 404.
 */
import path from 'node:path';
import nextPkg from 'next';
import type { WebHandler } from '../graphql/server.js';
import { ROOT, startWebBuild, WebBuildError } from './build.js';
import { type Phase, serveBuildingPage } from './building-page.js';

/** `next` is CommonJS: under NodeNext its default import is the module object, whose `default` is the factory. */
type CreateNext = typeof import('next/dist/server/next.js').default;
const createNext = ((nextPkg as unknown as { default?: CreateNext }).default ??
  (nextPkg as unknown as CreateNext)) as CreateNext;

export interface DemoUser {
  name: string;
  role: string;
  token: string;
  /** with the demo OpenID Provider: where one click signs the person in (then `token` is empty) */
  signIn?: string;
}

export interface WebOptions {
  dev: boolean;
  /** Demo users for one-click sign-in; read on every request, so they may be filled after start-up. */
  demoUsers?: () => DemoUser[];
  log?: (line: string) => void;
  /** The checkout whose web/ is served; default: this engine's. */
  root?: string;
}

export type Dashboard = ReturnType<typeof startDashboard>;

export function startDashboard(opts: WebOptions) {
  const log = opts.log ?? console.log;
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  // `next dev` compiles on request: nothing to build first.
  const root = opts.root ?? ROOT;
  const build = opts.dev ? null : startWebBuild({ root, log });
  if (build && build.state() !== 'current')
    log('[abada] until the dashboard is ready, / says so; the API, /healthz and the demo do not wait for it');
  let failed = false;
  let next: WebHandler | null = null;
  let closed = false;
  const phase = (): Phase => {
    if (failed) return 'failed';
    const state = build?.state();
    return state === 'building' || state === 'waiting' ? 'building' : 'starting';
  };

  const ready = (async () => {
    await build?.done;
    const app = createNext({ dev: opts.dev, dir: path.join(root, 'web'), quiet: !opts.dev });
    await app.prepare();
    next = app.getRequestHandler();
  })();
  ready.catch((e) => {
    if (closed) return;
    failed = true;
    log(
      `[abada] ${e instanceof WebBuildError ? e.message : `the dashboard failed to start: ${String(e)}`}\n` +
        '[abada] the dashboard answers an error page; the API and the demo keep running',
    );
  });

  const handle: WebHandler = (req, res) => {
    const url = req.url ?? '/';
    if (url === '/demo/users.json' || url.startsWith('/demo/users.json?')) {
      const users = opts.demoUsers?.();
      res.writeHead(users ? 200 : 404, {
        'content-type': 'application/json',
        ...(users ? { 'cache-control': 'no-store' } : {}),
      });
      res.end(JSON.stringify(users ?? []));
      return;
    }
    if (next) return next(req, res);
    serveBuildingPage(phase(), req.method, res);
  };

  return {
    /** the engine's `web` handler, valid from the start */
    handle,
    /** resolves when the dashboard's paths serve the dashboard itself; rejects when it could not be built */
    ready,
    /** whether this start had to build (or wait for a build of) the dashboard, for what start-up prints */
    building: () => build !== null && build.state() !== 'current',
    /** stops a build still running (the engine is stopping) */
    close() {
      closed = true;
      build?.stop();
    },
  };
}
