/** A tool binding as the engine hands it to a worker: a `read` of `server/tool` over streamable HTTP. */
import type { ToolBinding } from '../../server/worker/graphql.js';

export const readBinding = (url: string, server: string, tool: string): ToolBinding => ({
  ref: `${server}/${tool}`,
  server,
  tool,
  policy: 'READ',
  idempotency: 'NONE',
  transport: 'streamable-http',
  url,
  command: null,
  args: [],
  credential: null,
  credentialEnv: null,
  inputSchemaSha256: null,
  editable: false,
  precondition: null,
  lookup: null,
  redact: [],
});
