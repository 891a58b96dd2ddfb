/** The demo CRM's test controls (`POST /control`): faults and changes a test or a demo asks for. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrmCustomer } from './crm-state.js';
import { readBody, sendJson } from './http-util.js';

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

export async function handleControl(
  api: CrmControls,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const text = await readBody(req);
  let cmd: Record<string, unknown>;
  try {
    cmd = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    sendJson(res, 400, { error: 'body must be JSON' });
    return;
  }
  switch (cmd.action) {
    case 'reset':
      api.reset();
      break;
    case 'delay':
      api.setDelay(
        String(cmd.tool),
        Number(cmd.ms ?? 0),
        cmd.times === undefined ? undefined : Number(cmd.times),
      );
      break;
    case 'rename':
      api.renameTool(String(cmd.from), String(cmd.to));
      break;
    case 'alterSchema':
      api.alterSchema(String(cmd.tool), cmd.altered !== false);
      break;
    case 'fail':
      api.failNext(
        String(cmd.tool),
        cmd.message === undefined ? undefined : String(cmd.message),
        cmd.times === undefined ? undefined : Number(cmd.times),
      );
      break;
    case 'refundByHand':
      api.refundByHand(String(cmd.orderId));
      break;
    case 'dropAnswer':
      api.dropAnswer(String(cmd.tool), cmd.times === undefined ? undefined : Number(cmd.times));
      break;
    case 'dropRequest':
      api.dropRequest(String(cmd.tool), cmd.times === undefined ? undefined : Number(cmd.times));
      break;
    case 'addCustomer':
      api.addCustomer(cmd.customer as CrmCustomer);
      break;
    default:
      sendJson(res, 400, { error: `unknown action ${String(cmd.action)}` });
      return;
  }
  sendJson(res, 200, { ok: true });
}
