/**
 * Signing in through Abada and the demo OpenID Provider without a browser (redirects followed by hand, a
 * cookie jar per host, the login form posted): the demo signs each person in once at start-up, so their
 * principal exists before anyone clicks; tests tamper with one of its steps.
 */

/** Cookies per host, as a browser would keep them (paths ignored: harmless for these two servers). */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  header(url: URL): string {
    return [...(this.byHost.get(url.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).host)?.get(name);
  }

  set(url: string, name: string, value: string): void {
    const host = new URL(url).host;
    this.byHost.set(host, (this.byHost.get(host) ?? new Map()).set(name, value));
  }

  store(url: URL, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (gone) this.byHost.get(url.host)?.delete(name);
      else this.set(url.href, name, value);
    }
  }
}

export async function request(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const u = new URL(url);
  const headers = new Headers(init.headers);
  const cookie = jar.header(u);
  if (cookie) headers.set('cookie', cookie);
  const res = await fetch(u, { ...init, headers, redirect: 'manual' });
  jar.store(u, res);
  return res;
}

const next = (from: string, res: Response) => new URL(res.headers.get('location') ?? '', from).href;

/** /auth/login on Abada: the URL of the provider's authorization endpoint it redirects to. */
export async function startSignIn(jar: CookieJar, engineUrl: string, query = ''): Promise<string> {
  const res = await request(jar, `${engineUrl}/auth/login${query}`);
  if (res.status !== 303) throw new Error(`/auth/login answered ${res.status}: ${await res.text()}`);
  return next(`${engineUrl}/auth/login`, res);
}

/**
 * At the provider: follows its redirects, fills the login form, and returns the URL it sends the
 * browser back to (Abada's /auth/callback with code and state), without following that one.
 */
export async function loginAtProvider(
  jar: CookieJar,
  authorizationUrl: string,
  username: string,
  password: string,
): Promise<string> {
  let url = authorizationUrl;
  const origin = new URL(authorizationUrl).origin;
  for (let hops = 0; hops < 12; hops++) {
    if (new URL(url).origin !== origin) return url;
    const res = await request(jar, url);
    if (res.status >= 300 && res.status < 400) {
      url = next(url, res);
      continue;
    }
    const html = await res.text();
    const action = /<form id="login" method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action)
      throw new Error(`the provider answered ${res.status} without a login form: ${html.slice(0, 300)}`);
    const posted = await request(jar, new URL(action, url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password }).toString(),
    });
    if (posted.status < 300 || posted.status >= 400) throw new Error(`login refused (${posted.status})`);
    url = next(url, posted);
  }
  throw new Error('too many redirects at the provider');
}

/** The whole sign-in; returns the jar holding Abada's session cookie. */
export async function signInThroughProvider(
  engineUrl: string,
  username: string,
  password: string,
): Promise<CookieJar> {
  const jar = new CookieJar();
  const authorization = await startSignIn(
    jar,
    engineUrl,
    `?login_hint=${encodeURIComponent(username)}&prompt=login`,
  );
  const callback = await loginAtProvider(jar, authorization, username, password);
  const res = await request(jar, callback);
  if (res.status !== 303) throw new Error(`/auth/callback answered ${res.status}: ${await res.text()}`);
  return jar;
}
