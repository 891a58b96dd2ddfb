'use client';
/** Sign in with a token; on the demo, one click per demo user (from /demo/users.json). */
import { type FormEvent, useEffect, useState } from 'react';
import { useSession } from '../lib/session';

interface DemoUser {
  name: string;
  role: string;
  token: string;
}

export function SignIn() {
  const { signIn } = useSession();
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
  return (
    <section className="card narrow">
      <h1>Sign in</h1>
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
      {demo.length > 0 ? (
        <div className="demo-users">
          <h2>Demo users</h2>
          <ul className="plain">
            {demo.map((u) => (
              <li key={u.name}>
                <button type="button" onClick={() => signIn(u.token)}>
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
