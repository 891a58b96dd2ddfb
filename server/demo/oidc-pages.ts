/**
 * The demo OpenID Provider's login page. With a `login_hint` naming a demo person (the dashboard's
 * "Sign in as fiona" button), the form is filled in and submits itself: one click in the demo, through
 * the same provider round trip as a typed password. Demo passwords are printed at start-up anyway.
 */
import type http from 'node:http';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function loginPage(
  uid: string,
  hint: unknown,
  error: string | null,
  accounts: Map<string, { password: string }>,
): string {
  const user = typeof hint === 'string' ? hint : '';
  const oneClick = !error && accounts.has(user);
  const password = oneClick ? (accounts.get(user)?.password ?? '') : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo identity provider — sign in</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.3rem 0}input,button{padding:.5rem;font-size:1rem}.error{color:#b00020}</style>
</head><body>
<h1>Demo identity provider</h1>
<p>Sign in to continue to Abada. People: ${[...accounts.keys()].map(esc).join(', ')}.</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form id="login" method="post" action="/interaction/${esc(uid)}/login">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="${esc(user)}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" value="${esc(password)}" required>
<button type="submit">Sign in</button>
</form>
${oneClick ? `<script>document.getElementById('login').submit()</script>` : ''}
</body></html>`;
}

export async function readBody(req: http.IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 8192) break;
  }
  return new URLSearchParams(body);
}
