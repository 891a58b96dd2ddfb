/**
 * The cookies of sign-in (SPEC §12): the session cookie, named for Abada alone (the provider may share
 * the host: oidc-provider's are `_session` and `_interaction`), HttpOnly, SameSite=Lax, Secure behind
 * https; and the short-lived cookie of a sign-in in progress (sealed state, nonce and PKCE verifier).
 */
export type CookieNames = ReturnType<typeof cookieNames>;

/** `__Host-` names behind https: the browser then insists on Secure, Path=/ and no Domain. */
export function cookieNames(publicUrl: string) {
  const secure = publicUrl.startsWith('https:');
  return secure
    ? { session: '__Host-abada_session', pending: '__Host-abada_signin', secure }
    : { session: 'abada_session', pending: 'abada_signin', secure };
}

export function readCookie(header: string | string[] | undefined, name: string): string | null {
  const raw = Array.isArray(header) ? header.join(';') : (header ?? '');
  for (const part of raw.split(';')) {
    const i = part.indexOf('=');
    if (i < 0 || part.slice(0, i).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(i + 1).trim());
    } catch (e) {
      if (!(e instanceof URIError)) throw e; // a malformed %-escape: not a cookie we set
      return null;
    }
  }
  return null;
}

/** A Set-Cookie value; maxAgeS 0 deletes the cookie. */
export function setCookie(names: CookieNames, name: string, value: string, maxAgeS: number): string {
  const age = Math.max(0, Math.floor(maxAgeS));
  const secure = names.secure ? '; Secure' : '';
  return `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${age}${secure}`;
}
