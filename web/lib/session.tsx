'use client';
/**
 * Who is signed in, and the urql client built for it. Two ways (SPEC §12): a server-side session from
 * the OpenID Provider (an HttpOnly cookie the page never sees; GET /auth/session says who and gives the
 * CSRF token every POST carries), or, where ABADA_DASHBOARD_TOKEN_SIGNIN allows, a pasted bearer token
 * kept in sessionStorage (it dies with the tab). The graphql-ws client is created only in the browser,
 * after mount, on the same origin's /graphql: the browser sends the cookie with the upgrade.
 */
import { createClient as createWsClient } from 'graphql-ws';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { Client, cacheExchange, fetchExchange, Provider, subscriptionExchange } from 'urql';

const KEY = 'abada.token';

/** What GET /auth/session answers. */
interface ServerSession {
  signedIn: boolean;
  csrfToken: string | null;
  oidc: boolean;
  tokenSignIn: boolean;
}

type Credentials = { token: string } | { csrf: string };

interface Session {
  /** someone is signed in (cookie session or pasted token) */
  signedIn: boolean;
  ready: boolean;
  /** people sign in with the organisation's OpenID Provider */
  oidc: boolean;
  /** pasting a token is offered */
  tokenSignIn: boolean;
  signIn(token: string): void;
  signOut(): void;
}

const SessionContext = createContext<Session>({
  signedIn: false,
  ready: false,
  oidc: false,
  tokenSignIn: true,
  signIn: () => {},
  signOut: () => {},
});

export const useSession = () => useContext(SessionContext);

function makeClient(creds: Credentials) {
  const wsUrl = `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql`;
  const headers: Record<string, string> =
    'token' in creds ? { authorization: `Bearer ${creds.token}` } : { 'x-abada-csrf': creds.csrf };
  const ws = createWsClient({
    url: wsUrl,
    connectionParams: 'token' in creds ? { authorization: `Bearer ${creds.token}` } : {},
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
  });
  const client = new Client({
    url: '/graphql',
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers, credentials: 'same-origin' }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, dispose: () => void ws.dispose() };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [creds, setCreds] = useState<Credentials | null>(null);
  const [server, setServer] = useState<ServerSession | null>(null);
  useEffect(() => {
    let live = true;
    fetch('/auth/session', { cache: 'no-store', credentials: 'same-origin' })
      .then((r) => (r.ok ? (r.json() as Promise<ServerSession>) : null))
      .catch(() => null)
      .then((s) => {
        if (!live) return;
        const info = s ?? { signedIn: false, csrfToken: null, oidc: false, tokenSignIn: true };
        setServer(info);
        const pasted = window.sessionStorage.getItem(KEY);
        if (info.signedIn && info.csrfToken) setCreds({ csrf: info.csrfToken });
        else if (pasted && info.tokenSignIn) setCreds({ token: pasted });
      });
    // a page restored from the back-forward cache after sign-out must not show what it showed before
    const onShow = (e: PageTransitionEvent) => {
      if (e.persisted) window.location.reload();
    };
    window.addEventListener('pageshow', onShow);
    return () => {
      live = false;
      window.removeEventListener('pageshow', onShow);
    };
  }, []);
  const signIn = useCallback((t: string) => {
    window.sessionStorage.setItem(KEY, t);
    setCreds({ token: t });
  }, []);
  const signOut = useCallback(() => {
    window.sessionStorage.removeItem(KEY);
    if (creds && 'csrf' in creds) {
      // ends the session here, then at the provider; replace() keeps this page out of the history
      fetch('/auth/logout', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'x-abada-csrf': creds.csrf, accept: 'application/json' },
      })
        .then((r) => r.json() as Promise<{ redirect?: string }>)
        .catch(() => ({ redirect: '/' }))
        .then((r) => window.location.replace(r.redirect ?? '/'));
    }
    setCreds(null);
  }, [creds]);
  const built = useMemo(() => (creds ? makeClient(creds) : null), [creds]);
  useEffect(() => () => built?.dispose(), [built]);
  const session = useMemo(
    () => ({
      signedIn: creds !== null,
      ready: server !== null,
      oidc: server?.oidc ?? false,
      tokenSignIn: server?.tokenSignIn ?? true,
      signIn,
      signOut,
    }),
    [creds, server, signIn, signOut],
  );
  return (
    <SessionContext.Provider value={session}>
      {built ? <Provider value={built.client}>{children}</Provider> : children}
    </SessionContext.Provider>
  );
}
