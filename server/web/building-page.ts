/**
 * What the dashboard's paths answer until the Next.js handler takes over: 503 with Retry-After (a script or
 * load balancer polling `/` must not mistake it for the dashboard), and a page that reloads once `/` answers
 * otherwise. It polls with HEAD rather than reloading on a timer, so a screen reader does not hear the page
 * again every few seconds; without JavaScript a meta refresh does the same every 5 s.
 */
import type { ServerResponse } from 'node:http';

export type Phase = 'building' | 'starting' | 'failed';

const TEXT: Record<Phase, { title: string; lines: string[] }> = {
  building: {
    title: 'Building the dashboard…',
    lines: [
      'The first start builds the dashboard, which takes about half a minute. This page reloads itself when it is ready.',
      'The engine does not wait for it: the GraphQL API at /graphql and /healthz already answer.',
    ],
  },
  starting: {
    title: 'Starting the dashboard…',
    lines: ['The dashboard is built and is loading. This page reloads itself in a moment.'],
  },
  failed: {
    title: 'The dashboard could not be built',
    lines: [
      'The engine runs (the GraphQL API at /graphql answers), but the build of its dashboard failed.',
      'The engine’s log says why, and `npm run web:build` shows the whole build output; start the engine again once that builds.',
    ],
  },
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function html(phase: Phase): string {
  const { title, lines } = TEXT[phase];
  const waiting = phase !== 'failed';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Abada</title>
${waiting ? '<noscript><meta http-equiv="refresh" content="5"></noscript>' : ''}
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  main { max-width: 36rem; margin: 15vh auto; padding: 0 1.5rem; line-height: 1.5; }
  h1 { font-size: 1.5rem; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<div role="status">
${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n')}
</div>
</main>
${
  waiting
    ? `<script>
(function poll() {
  setTimeout(function () {
    fetch(location.href, { method: 'HEAD', cache: 'no-store' })
      .then(function (r) { if (r.status !== 503) location.reload(); else poll(); }, poll);
  }, 2000);
})();
</script>`
    : ''
}
</body>
</html>
`;
}

const PAGES = new Map<Phase, string>((Object.keys(TEXT) as Phase[]).map((p) => [p, html(p)]));

export function serveBuildingPage(phase: Phase, method: string | undefined, res: ServerResponse): void {
  const body = PAGES.get(phase)!;
  res.writeHead(phase === 'failed' ? 500 : 503, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    ...(phase === 'failed' ? {} : { 'retry-after': '5' }),
  });
  res.end(method === 'HEAD' ? undefined : body);
}
