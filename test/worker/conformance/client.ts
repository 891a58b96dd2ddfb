/**
 * The worker's MCP client (server/worker/mcp.ts) as the MCP conformance suite's client under test:
 * `conformance client --command "node --import tsx test/worker/conformance/client.ts"` appends the
 * scenario server's URL. It does what the worker does with a task's tool server — open one session
 * (initialize), list the tools, run the contract check on them as `read` bindings, then call each
 * listed tool once — through the worker's own ToolSessions, with nothing added for the suite.
 * `ABADA_MCP_ELICITATION` is read as the worker reads it (default `none`).
 */
import { ELICITATION_POLICIES, type ElicitationPolicy } from '../../../server/worker/elicitation.js';
import { ToolSessions, ToolSetupError } from '../../../server/worker/mcp.js';
import { readBinding } from '../../helpers/bindings.js';

/** Arguments for the scenarios' tools that take some; every other tool is called with `{}`. */
const ARGUMENTS: Record<string, Record<string, unknown>> = { add_numbers: { a: 2, b: 3 } };

const binding = (url: string, tool: string) => readBinding(url, 'conformance', tool);

async function main(url: string): Promise<number> {
  const raw = process.env.ABADA_MCP_ELICITATION ?? 'none';
  const elicitation = ELICITATION_POLICIES.find((p) => p === raw) as ElicitationPolicy;
  const sessions = new ToolSessions({
    timeoutMs: 20_000,
    elicitation,
    onElicitation: (n) => console.log(JSON.stringify({ elicitation: n })),
    allowedTools: null,
    credential: async () => null,
  });
  try {
    const listed = await sessions.tools(binding(url, ''));
    const bindings = listed.map((t) => binding(url, t.name));
    await sessions.check(bindings);
    let failed = 0;
    for (const b of bindings) {
      const r = await sessions.call(b, ARGUMENTS[b.tool] ?? {}, null);
      console.log(JSON.stringify({ tool: b.tool, ...r }));
      if (!r.ok) failed++;
    }
    return failed ? 1 : 0;
  } catch (e) {
    console.error(e instanceof ToolSetupError ? `${e.errorType}: ${e.message}` : e);
    return 1;
  } finally {
    await sessions.closeAll();
  }
}

const url = process.argv.at(-1);
if (!url?.startsWith('http')) {
  console.error('usage: client.ts <server-url>');
  process.exit(2);
}
process.exit(await main(url));
