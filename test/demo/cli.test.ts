import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';

const children: ChildProcess[] = [];

/** Starts a demo server CLI on an ephemeral port and returns the URL it prints. */
async function startCli(file: string, args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', file, '--port', '0', ...args], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`exited ${code}: ${out}`)));
  });
  return { child, url };
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
});

describe('demo server CLIs', () => {
  it('runs the CRM standalone with /state and /control', async () => {
    const { url } = await startCli('server/demo/crm-server.ts', ['--token', 'cli-secret']);
    const unauthorized = await fetch(`${url}/mcp`, { method: 'POST', body: '{}' });
    expect(unauthorized.status).toBe(401);
    const control = await fetch(`${url}/control`, {
      method: 'POST',
      body: JSON.stringify({ action: 'delay', tool: 'create_ticket', ms: 10 }),
    });
    expect(control.status).toBe(200);
    const state = await (await fetch(`${url}/state`)).json();
    expect(state).toMatchObject({ sideEffects: [], calls: [] });
  });

  it('runs the model server standalone with a named script', async () => {
    const { url } = await startCli('server/demo/model-server.ts', ['--script', 'refund']);
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4.1-mini',
        messages: [{ role: 'user', content: '<input name="customerId">C-42</input>' }],
      }),
    });
    const body = (await res.json()) as { choices: Array<{ message: { tool_calls: unknown[] } }> };
    expect(body.choices[0].message.tool_calls).toHaveLength(1);
    const state = (await (await fetch(`${url}/state`)).json()) as { callCount: number };
    expect(state.callCount).toBe(1);
  });
});
