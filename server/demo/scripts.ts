/**
 * The scripted model's scripts: pure functions of the conversation so far (the tool results it holds,
 * matched to the calls by `tool_call_id`), never counting their own calls, so a worker that rebuilds the
 * conversation from the journal after a crash gets exactly the same next answer.
 */
import { isEngineRefusal } from '../shared/refusals.js';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | null | Array<{ type: string; text?: string }>;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}
export interface ScriptRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatTool[];
}
export type ScriptAnswer =
  | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> | string }>; content?: string }
  | { content: string }
  | { unavailable: true; message?: string }
  | { status: number; body: unknown; headers?: Record<string, string> };
export type Script = (req: ScriptRequest) => ScriptAnswer;

/** The text of a message's content (string or array of text parts). */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return '';
}

/** The raw text of `<input name="…">…</input>` in the user messages (first match), else undefined. */
export function userInput(messages: ChatMessage[], name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`<input name="${escaped}">([\\s\\S]*?)</input>`);
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const match = re.exec(textOf(m.content));
    if (match) return match[1].trim();
  }
  return undefined;
}

/** Every tool result in the conversation, paired with the function name the assistant called. */
export function toolResults(messages: ChatMessage[]) {
  const calls = new Map<string, ChatToolCall>();
  for (const m of messages) for (const c of m.tool_calls ?? []) calls.set(c.id, c);
  return messages.flatMap(({ role, tool_call_id: callId, name, content }) => {
    if (role !== 'tool' || !callId) return [];
    const call = calls.get(callId);
    return [
      {
        callId,
        name: call?.function.name ?? name ?? '',
        arguments: call?.function.arguments ?? '{}',
        content: textOf(content),
      },
    ];
  });
}

/** The last result of a given function (e.g. `crm__get_customer`), else undefined. */
export function lastResult(messages: ChatMessage[], name: string) {
  return toolResults(messages).findLast((r) => r.name === name);
}

export function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return undefined;
  }
}

const final = (value: Record<string, unknown>): ScriptAnswer => ({ content: JSON.stringify(value) });

/** The amount a customer asks for in their message ("€89", "15 EUR", "-5 EUR"), else undefined. */
export function askedAmount(message: string | undefined): number | undefined {
  const m = /(?:€\s?|EUR\s)(-?\d+(?:\.\d+)?)|(-?\d+(?:\.\d+)?)\s?(?:€|EUR)/.exec(message ?? '');
  const n = m ? Number(m[1] ?? m[2]) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

interface CustomerRecord {
  customerId?: string;
  tier?: string;
  orders?: Array<{ orderId?: string; status?: string; amount?: number; currency?: string }>;
}

function lostOrder(customer: CustomerRecord | undefined) {
  return customer?.orders?.find((o) => /lost/i.test(o.status ?? '')) ?? customer?.orders?.[0];
}

/** Seed 002: get_customer → create_ticket → `{ ticketId, priority: "high", summary, _confidence: 92 }`. */
export const supportTriageScript: Script = ({ messages }) => {
  const customerId = userInput(messages, 'customerId');
  if (!customerId) return final({ error: 'no customerId input', _confidence: 10 });
  const customerResult = lastResult(messages, 'crm__get_customer');
  if (!customerResult) return { toolCalls: [{ name: 'crm__get_customer', arguments: { customerId } }] };
  const ticketResult = lastResult(messages, 'crm__create_ticket');
  if (!ticketResult) {
    const message = userInput(messages, 'message') ?? '';
    const subject = /parcel|never arrived|lost/i.test(message)
      ? 'Parcel not received'
      : `Support request from ${customerId}`;
    return {
      toolCalls: [{ name: 'crm__create_ticket', arguments: { customerId, subject, priority: 'high' } }],
    };
  }
  const ticket = parseJson(ticketResult.content);
  if (!ticket || typeof ticket.ticketId !== 'string') {
    return final({
      ticketId: null,
      priority: 'high',
      summary: `Could not open a ticket: ${ticketResult.content}`,
      _confidence: 30,
    });
  }
  const customer = parseJson(customerResult.content) as CustomerRecord | undefined;
  const order = lostOrder(customer);
  const summary =
    customer && order
      ? `Order ${order.orderId} ${/lost/i.test(order.status ?? '') ? 'lost' : (order.status ?? 'open')}, ${customer.tier} customer`
      : `Ticket opened for ${customerId}`;
  return final({ ticketId: ticket.ticketId, priority: 'high', summary, _confidence: 92 });
};

/**
 * Seed 000: get_customer → refund `{ orderId: "5531", amount: 89, currency: "EUR" }` (Alice's lost order)
 * → `{ refunded: true, refundId, _confidence: 95 }`, or, when the refund answer starts with `Rejected:`,
 * `{ refunded: false, reason, _confidence: 90 }`.
 */
export const refundScript: Script = ({ messages }) => {
  const customerId = userInput(messages, 'customerId') ?? 'C-42';
  const customerResult = lastResult(messages, 'crm__get_customer');
  if (!customerResult) return { toolCalls: [{ name: 'crm__get_customer', arguments: { customerId } }] };
  const refundResult = lastResult(messages, 'crm__refund');
  if (!refundResult) {
    const order = lostOrder(parseJson(customerResult.content) as CustomerRecord | undefined);
    const args = {
      orderId: order?.orderId ?? '5531',
      amount: askedAmount(userInput(messages, 'message')) ?? order?.amount ?? 89,
      currency: order?.currency ?? 'EUR',
    };
    // the model says why, next to the call: the approver reads it in the approval's basis
    return {
      content: `Order ${args.orderId} was never delivered; refunding ${args.amount} ${args.currency} as the customer asked.`,
      toolCalls: [{ name: 'crm__refund', arguments: args }],
    };
  }
  // The worker appends an approver's comment to the tool's answer (`\n\nNote from the approver: …`).
  const text = refundResult.content.split('\n\nNote from the approver:')[0].trim();
  if (text.startsWith('Rejected:')) {
    const reason = /Reason:\s*([\s\S]*)$/.exec(text)?.[1]?.trim() || text;
    return final({ refunded: false, reason, _confidence: 90 });
  }
  // refused by the rules before anyone was asked: the engine's own words are the reason
  if (isEngineRefusal(text)) return final({ refunded: false, reason: text, _confidence: 90 });
  const refund = parseJson(text);
  if (!refund || typeof refund.refundId !== 'string') {
    return final({ refunded: false, reason: text, _confidence: 50 });
  }
  return final({ refunded: true, refundId: refund.refundId, _confidence: 95 });
};

/** Answers 503 (model unavailable) for the listed model names; delegates the others to `inner`. */
export function unavailableModels(models: Iterable<string>, inner: Script): Script {
  const set = new Set(models);
  return (req) =>
    set.has(req.model) ? { unavailable: true, message: `The model ${req.model} is unavailable` } : inner(req);
}

/** The demo's one model: the refund script when system or user text mentions "refund", else triage's. */
export const demoScript: Script = (req) => {
  const text = req.messages
    .filter((m) => m.role === 'system' || m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  return /refund/i.test(text) ? refundScript(req) : supportTriageScript(req);
};

export const SCRIPTS: Record<string, Script> = {
  'support-triage': supportTriageScript,
  refund: refundScript,
  demo: demoScript,
};
