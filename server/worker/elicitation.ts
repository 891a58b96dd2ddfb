/**
 * MCP elicitation (a tool server asking for input mid-call) with nobody at the keyboard.
 * `ABADA_MCP_ELICITATION`:
 *  - `none` (default): the capability is not declared; a server that asks anyway gets "Method not found".
 *  - `defaults`: declared for forms with `applyDefaults` (SEP-1034): a form whose every required field has
 *    a default in the server's schema is accepted with those, any other declined. Nothing the model wrote
 *    goes into an answer; URL mode is not declared. A person's channel stays the approval.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export type ElicitationPolicy = 'none' | 'defaults';
export const ELICITATION_POLICIES: readonly ElicitationPolicy[] = ['none', 'defaults'];

export interface ElicitationNotice {
  server: string;
  message: string;
  action: 'accept' | 'decline';
  /** required fields without a default (why a form was declined) */
  missing: string[];
}

/** Sets the client up for `policy`; call before `connect`. `notice` hears of every answer given. */
export function enableElicitation(
  client: Client,
  server: string,
  policy: ElicitationPolicy,
  notice: (n: ElicitationNotice) => void = () => {},
): void {
  if (policy === 'none') return;
  client.registerCapabilities({ elicitation: { form: { applyDefaults: true } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params;
    const schema = 'requestedSchema' in params ? params.requestedSchema : undefined;
    const properties = (schema?.properties ?? {}) as Record<string, { default?: unknown }>;
    const missing = (schema?.required ?? []).filter((field) => properties[field]?.default === undefined);
    const action = schema && missing.length === 0 ? 'accept' : 'decline';
    notice({ server, message: params.message, action, missing });
    // accept with no content of our own: the SDK adds the schema's defaults (applyDefaults)
    return action === 'accept' ? { action, content: {} } : { action };
  });
}
