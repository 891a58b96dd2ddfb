'use client';
/**
 * The signed-in token (sessionStorage, so it dies with the tab) and the urql client built from it. The
 * graphql-ws client is created only in the browser, after mount, on the same origin's /graphql.
 */
import { createClient as createWsClient } from 'graphql-ws';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { Client, cacheExchange, fetchExchange, Provider, subscriptionExchange } from 'urql';

const KEY = 'abada.token';

interface Session {
  token: string | null;
  ready: boolean;
  signIn(token: string): void;
  signOut(): void;
}

const SessionContext = createContext<Session>({
  token: null,
  ready: false,
  signIn: () => {},
  signOut: () => {},
});

export const useSession = () => useContext(SessionContext);

function makeClient(token: string) {
  const wsUrl = `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/graphql`;
  const ws = createWsClient({
    url: wsUrl,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
  });
  const client = new Client({
    url: '/graphql',
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
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
  const [token, setToken] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    setToken(window.sessionStorage.getItem(KEY));
    setReady(true);
  }, []);
  const signIn = useCallback((t: string) => {
    window.sessionStorage.setItem(KEY, t);
    setToken(t);
  }, []);
  const signOut = useCallback(() => {
    window.sessionStorage.removeItem(KEY);
    setToken(null);
  }, []);
  const built = useMemo(() => (token ? makeClient(token) : null), [token]);
  useEffect(() => () => built?.dispose(), [built]);
  const session = useMemo(() => ({ token, ready, signIn, signOut }), [token, ready, signIn, signOut]);
  return (
    <SessionContext.Provider value={session}>
      {built ? <Provider value={built.client}>{children}</Provider> : children}
    </SessionContext.Provider>
  );
}
