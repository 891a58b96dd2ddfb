/**
 * How long `npm start` takes until a newcomer can act, as the README reports it: runs `npm start` in a
 * checkout (default: this one; for a first start, a fresh clone after `npm ci`) and times, from the
 * spawn, /healthz answering, Alice's refund waiting for fiona over GraphQL (a PENDING approval of
 * crm/refund for order 5531) and the dashboard's `/` answering 200 with the dashboard itself; then stops
 * it. Prints the load average before and after, since the figures depend on how busy the machine is.
 *
 *   npx tsx scripts/measure-first-start.ts [checkout] [--port N] [--log]   (--log: print npm start's output)
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const portAt = args.indexOf('--port');
const port = portAt >= 0 ? Number(args[portAt + 1]) : 3000;
const checkout = path.resolve(
  args.find((a, i) => !a.startsWith('--') && (portAt < 0 || i !== portAt + 1)) ?? '.',
);
const url = `http://127.0.0.1:${port}`;
const LIMIT_MS = 180_000;

const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1' };
for (const name of Object.keys(env)) if (/^(DATABASE_URL|ABADA_)/.test(name)) delete env[name];

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `checkout ${checkout}, port ${port}, started ${new Date().toISOString()}; load average before: ${load()}`,
);
const t0 = Date.now();
const child = spawn('npm', ['start'], {
  cwd: checkout,
  env,
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
child.stdout.on('data', (d: Buffer) => {
  output += d.toString();
});
child.stderr.on('data', (d: Buffer) => {
  output += d.toString();
});
const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);

async function until(what: string, check: () => Promise<boolean>): Promise<string> {
  while (Date.now() - t0 < LIMIT_MS) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    if (await check().catch(() => false)) {
      const s = seconds();
      console.log(`${what}: ${s} s`);
      return s;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${what} within ${LIMIT_MS / 1000} s:\n${output}`);
}

/** fiona's token from the demo's users file (written once the demo has set its people up). */
function fionaToken(): string | null {
  const file = path.join(checkout, '.abada', 'demo-users.json');
  if (!existsSync(file)) return null;
  const users = JSON.parse(readFileSync(file, 'utf8')) as Array<{ name: string; token?: string }>;
  return users.find((u) => u.name === 'fiona')?.token ?? null;
}

async function refundPending(): Promise<boolean> {
  const token = fionaToken();
  if (!token) return false;
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: '{ approvals(state: PENDING, first: 20) { edges { node { toolRef arguments } } } }',
    }),
  });
  const body = (await res.json()) as {
    data?: { approvals: { edges: Array<{ node: { toolRef: string; arguments: { orderId?: string } } }> } };
  };
  return !!body.data?.approvals.edges.some(
    (e) => e.node.toolRef === 'crm/refund' && e.node.arguments.orderId === '5531',
  );
}

try {
  await until('/healthz answers', async () => (await fetch(`${url}/healthz`)).ok);
  await until("Alice's refund PENDING for fiona", refundPending);
  await until('the dashboard answers', async () => {
    const res = await fetch(`${url}/`);
    return res.status === 200 && (await res.text()).includes('/_next/static/');
  });
} finally {
  console.log(`load average after: ${load()}`);
  if (child.pid) process.kill(-child.pid, 'SIGTERM');
  await new Promise((r) => child.on('exit', r));
  if (args.includes('--log')) console.log(output);
}
