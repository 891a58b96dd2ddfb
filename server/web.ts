/**
 * The dashboard on the engine's own port: Next.js (app router, `web/`) as the `web` handler of
 * startEngine. In demo mode it also serves `/demo/users.json` — the demo users' names, roles and tokens
 * for one-click sign-in; outside the demo that path is a plain 404.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nextPkg from 'next';
import type { WebHandler } from './graphql/server.js';

/** `next` is CommonJS: under NodeNext its default import is the module object, whose `default` is the factory. */
type CreateNext = typeof import('next/dist/server/next.js').default;
const createNext = ((nextPkg as unknown as { default?: CreateNext }).default ??
  (nextPkg as unknown as CreateNext)) as CreateNext;

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_DIR = path.join(ROOT, 'web');

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
}

/** Whether web/.next holds a production build newer than every dashboard source (and schema.graphql). */
export function webIsBuilt(): boolean {
  const buildId = path.join(WEB_DIR, '.next', 'BUILD_ID');
  if (!existsSync(buildId)) return false;
  const builtAt = statSync(buildId).mtimeMs;
  return newestSource(WEB_DIR) <= builtAt && statSync(path.join(ROOT, 'schema.graphql')).mtimeMs <= builtAt;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.next' || e.name === 'node_modules' || e.name === 'next-env.d.ts') continue;
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** `next build web` (about 20-60 s on a laptop); inherits stdio so the operator sees progress. */
export function buildWeb(log: (line: string) => void = console.log): void {
  log('[abada] building the dashboard (next build web, about a minute the first time)…');
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'build', WEB_DIR],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    },
  );
  if (r.status !== 0) throw new Error(`next build web failed (exit ${r.status ?? r.signal})`);
  log(`[abada] dashboard built in ${Math.round((Date.now() - t0) / 1000)} s`);
}

export async function createWebHandler(opts: WebOptions): Promise<WebHandler> {
  if (!opts.dev && !webIsBuilt()) buildWeb();
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  const app = createNext({ dev: opts.dev, dir: WEB_DIR, quiet: !opts.dev });
  await app.prepare();
  const handle = app.getRequestHandler();
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    if (url === '/demo/users.json' || url.startsWith('/demo/users.json?')) {
      if (!opts.demoUsers) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('[]');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(opts.demoUsers()));
      return;
    }
    return handle(req, res);
  };
}
