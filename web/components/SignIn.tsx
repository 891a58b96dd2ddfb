'use client';
/**
 * Sign in: with the organisation's OpenID Provider when Abada has one (SPEC §12); by pasting a token
 * only where ABADA_DASHBOARD_TOKEN_SIGNIN allows it (the default without OpenID Connect). On the demo,
 * one click per demo person (from /demo/users.json): through the demo's own provider when it runs one.
 */
import { type FormEvent, useEffect, useState } from 'react';
import { useSession } from '../lib/session';

interface DemoUser {
  name: string;
  role: string;
  token: string;
  /** the one-click sign-in through the demo's OpenID Provider */
  signIn?: string;
}

/** Where the provider sends the person back to: this page. */
function here(): string {
  return `${window.location.pathname}${window.location.search}`;
}

export function SignIn() {
  const { signIn, oidc, tokenSignIn } = useSession();
  const [token, setToken] = useState('');
  const [demo, setDemo] = useState<DemoUser[]>([]);
  useEffect(() => {
    fetch('/demo/users.json')
      .then((r) => (r.ok ? r.json() : []))
      .then((users: DemoUser[]) => setDemo(Array.isArray(users) ? users : []))
      .catch(() => setDemo([]));
  }, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim()) signIn(token.trim());
  };
  const demoSignIn = (u: DemoUser) => {
    if (u.signIn) window.location.assign(`${u.signIn}&returnTo=${encodeURIComponent(here())}`);
    else signIn(u.token);
  };
  return (
    <section className="card narrow">
      <h1>Sign in</h1>
      {oidc ? (
        <p>
          <a
            className="button primary"
            href="/auth/login"
            onClick={(e) => {
              e.preventDefault();
              window.location.assign(`/auth/login?returnTo=${encodeURIComponent(here())}`);
            }}
          >
            Sign in with your organisation
          </a>
        </p>
      ) : null}
      {tokenSignIn ? (
        <form onSubmit={submit} className="stack">
          <label htmlFor="token">Your access token</label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            placeholder="abada_…"
          />
          <p className="muted small">Kept in this browser tab only; closing the tab signs you out.</p>
          <button type="submit" className="primary" disabled={!token.trim()}>
            Sign in
          </button>
        </form>
      ) : null}
      {demo.length > 0 ? (
        <div className="demo-users">
          <h2>Demo users</h2>
          <ul className="plain">
            {demo.map((u) => (
              <li key={u.name}>
                <button type="button" onClick={() => demoSignIn(u)}>
                  Sign in as {u.name}
                </button>{' '}
                <span className="muted">{u.role}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
