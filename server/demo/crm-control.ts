/** The demo CRM's test controls (`POST /control`): faults and changes a test or a demo asks for. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrmCustomer } from './crm-state.js';
import { readJson, sendJson } from './http-util.js';

export interface CrmControls {
  reset(): void;
  /** Hold the answer of `tool` for `ms` (0 removes); `times` limits it to the next N calls. */
  setDelay(tool: string, ms: number, times?: number): void;
  /** The next `tools/list` shows `from` as `to`; calls to `from` then fail as unknown. */
  renameTool(from: string, to: string): void;
  /** Adds (or removes) an optional `note` field to a tool's input schema: its schema hash changes. */
  alterSchema(tool: string, altered?: boolean): void;
  /** The next `times` calls of `tool` answer a tool error without any side effect. */
  failNext(tool: string, message?: string, times?: number): void;
  addCustomer(customer: CrmCustomer): void;
  /** Someone refunds the order in the CRM directly, not through the agent. */
  refundByHand(orderId: string): void;
  /** The next `times` calls of `tool` run, then the connection drops before the answer. */
  dropAnswer(tool: string, times?: number): void;
  /** The next `times` requests of `tool` are lost: the connection drops before the call runs. */
  dropRequest(tool: string, times?: number): void;
}

type Command = Record<string, unknown>;

const optional = <T>(value: unknown, as: (v: unknown) => T) => (value === undefined ? undefined : as(value));

const ACTIONS = new Map<unknown, (api: CrmControls, cmd: Command) => void>([
  ['reset', (api) => api.reset()],
  ['delay', (api, c) => api.setDelay(String(c.tool), Number(c.ms ?? 0), optional(c.times, Number))],
  ['rename', (api, c) => api.renameTool(String(c.from), String(c.to))],
  ['alterSchema', (api, c) => api.alterSchema(String(c.tool), c.altered !== false)],
  ['fail', (api, c) => api.failNext(String(c.tool), optional(c.message, String), optional(c.times, Number))],
  ['refundByHand', (api, c) => api.refundByHand(String(c.orderId))],
  ['dropAnswer', (api, c) => api.dropAnswer(String(c.tool), optional(c.times, Number))],
  ['dropRequest', (api, c) => api.dropRequest(String(c.tool), optional(c.times, Number))],
  ['addCustomer', (api, c) => api.addCustomer(c.customer as CrmCustomer)],
]);

export async function handleControl(
  api: CrmControls,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const cmd = (await readJson(req, res, { error: 'body must be JSON' })) as Command | undefined;
  if (cmd === undefined) return;
  const action = ACTIONS.get(cmd.action);
  if (!action) return sendJson(res, 400, { error: `unknown action ${String(cmd.action)}` });
  action(api, cmd);
  sendJson(res, 200, { ok: true });
}
