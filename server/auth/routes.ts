/**
 * The sign-in routes (SPEC §12): /auth/login starts the authorization code flow, /auth/callback is the
 * redirect URI to register at the provider (<ABADA_PUBLIC_URL>/auth/callback), /auth/logout ends the
 * session here and at the provider, /auth/session tells the dashboard who is signed in, its CSRF token,
 * and which ways of signing in it offers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenSignInOffered } from '../config.js';
import type { EngineContext } from '../engine/common/index.js';
import { constantTimeEqual, endSession, openSession } from '../engine/principals/index.js';
import { EngineError } from '../errors.js';
import { cookieNames, readCookie, setCookie } from './cookies.js';
import type { Identifier } from './identify.js';
import { type OidcClient, PENDING_TTL_MS, type PendingSignIn } from './oidc.js';
import { isProviderRefusal, isProviderUnreachable } from '../shared/provider-errors.js';

export interface AuthRoutesOptions {
  engine: EngineContext;
  oidc: OidcClient | null;
  identifier: Identifier;
  /** the public origin, e.g. http://127.0.0.1:3000 */
  origin: () => string;
  log: (e: unknown) => void;
}

const PROMPTS = new Set(['login', 'select_account', 'consent']);

/** Only a path of this site: no scheme, no host, no `//` (no open redirect). */
function safeReturnTo(value: string | null): string {
  return value && /^\/(?![/\\])/.test(value) ? value : '/';
}

/** Every answer of these routes is no-store; `cookies` are Set-Cookie values. */
function send(res: ServerResponse, status: number, head: object, cookies: string[], body?: string) {
  res.writeHead(status, {
    ...head,
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
  });
  res.end(body);
}

function page(res: ServerResponse, status: number, title: string, body: string, cookies: string[] = []) {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title><h1>${esc(title)}</h1>${body}`;
  send(res, status, { 'content-type': 'text/html; charset=utf-8' }, cookies, html);
}

const json = (res: ServerResponse, status: number, value: unknown, cookies: string[] = []) =>
  send(res, status, { 'content-type': 'application/json' }, cookies, JSON.stringify(value));

const redirect = (res: ServerResponse, location: string, cookies: string[]) =>
  send(res, 303, { location }, cookies);

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 4096) break;
  }
  return new URLSearchParams(body);
}

const disabled = (res: ServerResponse) =>
  page(
    res,
    404,
    'Single sign-on is not configured',
    '<p>Set ABADA_OIDC_ISSUER, ABADA_OIDC_CLIENT_ID and ABADA_OIDC_CLIENT_SECRET.</p>',
  );

async function login(o: AuthRoutesOptions, _req: IncomingMessage, res: ServerResponse, url: URL) {
  if (!o.oidc) return disabled(res);
  const prompt = url.searchParams.get('prompt');
  const { url: to, pending } = await o.oidc.start(
    `${o.origin()}/auth/callback`,
    safeReturnTo(url.searchParams.get('returnTo')),
    {
      login_hint: url.searchParams.get('login_hint') ?? undefined,
      prompt: prompt && PROMPTS.has(prompt) ? prompt : undefined,
    },
  );
  const sealed = o.engine.sealer.sealJson(pending);
  const names = cookieNames(o.origin());
  redirect(res, to.href, [setCookie(names, names.pending, sealed, PENDING_TTL_MS / 1000)]);
}

/** The provider sent the browser back: check everything, open the session, go where the person was. */
async function callback(o: AuthRoutesOptions, req: IncomingMessage, res: ServerResponse, url: URL) {
  if (!o.oidc) return disabled(res);
  const names = cookieNames(o.origin());
  const clear = setCookie(names, names.pending, '', 0);
  const again = '<p><a href="/auth/login">Sign in again</a></p>';
  let pending: PendingSignIn | null = null;
  try {
    pending = o.engine.sealer.openJson<PendingSignIn>(readCookie(req.headers.cookie, names.pending));
  } catch {
    pending = null;
  }
  if (!pending || Date.now() - pending.startedAt > PENDING_TTL_MS) {
    return page(
      res,
      400,
      'Sign-in expired',
      `<p>This sign-in was not started here or took too long.</p>${again}`,
      [clear],
    );
  }
  try {
    const current = new URL(`${url.pathname}${url.search}`, o.origin());
    const { identity, tokens } = await o.oidc.finish(current, pending);
    const { secret } = await openSession(o.engine, identity, tokens);
    const maxAge = o.engine.config.sessions.maxHours * 3600;
    redirect(res, pending.returnTo, [clear, setCookie(names, names.session, secret, maxAge)]);
  } catch (e) {
    // a refusal (ours, or openid-client's checks) is this person's answer; the provider out of reach,
    // the database or a bug go to the routes' own catch: logged, and a 502 page
    if (!(e instanceof EngineError || isProviderRefusal(e))) throw e;
    const why =
      e instanceof EngineError ? e.message : `The OpenID Provider's answer was refused (${reason(e)}).`;
    page(res, e instanceof EngineError ? 403 : 400, 'Sign-in failed', `<p>${why}</p>${again}`, [clear]);
  }
}

/** POST with the CSRF token (header or form field): ends the session, then the provider's. */
async function logout(o: AuthRoutesOptions, req: IncomingMessage, res: ServerResponse) {
  const names = cookieNames(o.origin());
  const wantsJson = (req.headers.accept ?? '').includes('application/json');
  const csrf = (req.headers['x-abada-csrf'] as string | undefined) ?? (await readForm(req)).get('csrf');
  const found = await o.identifier.cookie(req.headers.cookie ?? null);
  let to = '/';
  if (found.session) {
    if (!csrf || !constantTimeEqual(csrf, found.session.csrfToken)) {
      return json(res, 403, { error: 'Sign-out needs the CSRF token (x-abada-csrf); reload the dashboard.' });
    }
    await endSession(o.engine.db, found.session.id, 'SIGNED_OUT');
    const back = `${o.origin()}/`;
    // the session has ended here; a provider out of reach or refusing only costs its own sign-out page
    const url = o.oidc?.endSessionUrl(found.session.providerTokens.idToken, back).catch((e: unknown) => {
      if (isProviderUnreachable(e) || isProviderRefusal(e)) return null;
      throw e;
    });
    to = (await url) ?? '/';
  }
  const clear = setCookie(names, names.session, '', 0);
  if (wantsJson) return json(res, 200, { redirect: to }, [clear]);
  redirect(res, to, [clear]);
}

async function session(o: AuthRoutesOptions, req: IncomingMessage, res: ServerResponse) {
  const who = await o.identifier.cookie(req.headers.cookie ?? null);
  json(res, 200, {
    signedIn: who.actor !== null,
    name: who.actor?.name ?? null,
    csrfToken: who.session?.csrfToken ?? null,
    refusal: who.refusal,
    oidc: o.oidc !== null,
    tokenSignIn: tokenSignInOffered(o.engine.config),
  });
}

const ROUTES = new Map([
  ['GET /auth/login', login],
  ['GET /auth/callback', callback],
  ['POST /auth/logout', logout],
  ['GET /auth/session', session],
]);

/** The handler of /auth/*: true when it answered, false for any other path. */
export function authRoutes(o: AuthRoutesOptions) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://x');
    const route = ROUTES.get(`${req.method} ${url.pathname}`);
    if (!route) return false;
    route(o, req, res, url).catch((e) => {
      o.log(e);
      if (!res.headersSent)
        page(
          res,
          502,
          'Sign-in is unavailable',
          `<p>The OpenID Provider could not be reached (${reason(e)}); try again shortly.</p>`,
        );
      else res.end();
    });
    return true;
  };
}

function reason(e: unknown): string {
  const err = e as { code?: string; error?: string; message?: string };
  return (err.error ?? err.code ?? err.message ?? 'unknown')
    .toString()
    .slice(0, 120)
    .replace(/[<>&"]/g, '');
}
