/**
 * The in-memory state of the demo CRM: customers, tickets, refunds, e-mails, and the record of every call
 * and every side effect. The MCP layer (`crm-server.ts`) is a thin adapter over this class.
 *
 * Idempotency: every write except `send_email` honours an idempotency key. The first call with a key runs
 * the side effect and stores its result under the key; a later call with the same key (same tool, same
 * arguments) returns the stored result without a second effect. The same key with another tool or other
 * arguments is refused, as production APIs do (it is a client bug, never silently "deduplicated").
 */
import { canonicalJson } from '../shared/canonical.js';

/** Writes that honour an idempotency key (`send_email` is a write that ignores keys on purpose). */
const KEYED_WRITES: ReadonlySet<string> = new Set(['create_ticket', 'refund', 'close_ticket']);

interface CrmOrder {
  orderId: string;
  item: string;
  status: string;
  amount: number;
  currency: string;
}
export interface CrmCustomer {
  customerId: string;
  name: string;
  email: string;
  tier: 'gold' | 'silver' | 'bronze';
  orders: CrmOrder[];
}
interface CrmTicket {
  ticketId: string;
  customerId: string;
  subject: string;
  priority: 'low' | 'normal' | 'high';
  status: 'open' | 'closed';
}

/** A refund the CRM made: by the `refund` tool (with the key it was sent with), or by hand. */
export interface CrmRefund {
  refundId: string;
  orderId: string;
  amount: number;
  currency: string;
  key: string | null;
  byHand: boolean;
  at: string;
}

export interface CrmSideEffect {
  tool: string;
  key: string | null;
  args: Record<string, unknown>;
  result: unknown;
  at: string;
}

export interface CrmCall {
  /** 1-based sequence of the call on this server since the last reset. */
  seq: number;
  tool: string;
  /** `Idempotency-Key` header, else `_meta.idempotencyKey`, else null. */
  key: string | null;
  headerKey: string | null;
  metaKey: string | null;
  args: Record<string, unknown>;
  at: string;
  /** When the call reached its tool and when its answer left (epoch ms, sub-ms precision): the bench's clock. */
  receivedMs: number;
  answeredMs?: number;
  /** `ok` = ran (a side effect for writes), `replayed` = answered from the idempotency store. */
  status: 'pending' | 'ok' | 'replayed' | 'error';
  result?: unknown;
  error?: string;
}

/** A fault set on a tool for its next `remaining` calls (undefined: every call). */
type Rule = { remaining?: number };

type ToolOutcome = { ok: true; result: unknown; replayed?: boolean } | { ok: false; message: string };

function defaultCustomers(): CrmCustomer[] {
  return [
    {
      customerId: 'C-42',
      name: 'Alice Martin',
      email: 'alice@example.com',
      tier: 'gold',
      orders: [
        { orderId: '5531', item: 'Espresso machine', status: 'lost_parcel', amount: 89, currency: 'EUR' },
      ],
    },
    {
      customerId: 'C-7',
      name: 'Bob Okafor',
      email: 'bob@example.com',
      tier: 'silver',
      orders: [{ orderId: '5120', item: 'Headphones', status: 'delivered', amount: 59, currency: 'EUR' }],
    },
    {
      customerId: 'C-99',
      name: 'Chen Wei',
      email: 'chen@example.com',
      tier: 'bronze',
      orders: [{ orderId: '6002', item: 'Desk lamp', status: 'shipped', amount: 35, currency: 'EUR' }],
    },
  ];
}

export class CrmState {
  customers = new Map<string, CrmCustomer>(defaultCustomers().map((c) => [c.customerId, c]));
  tickets = new Map<string, CrmTicket>();
  sideEffects: CrmSideEffect[] = [];
  calls: CrmCall[] = [];
  /** Answers of a tool held `ms`. */
  delays = new Map<string, Rule & { ms: number }>();
  failures = new Map<string, Rule & { message: string }>();
  /** Tool renames as they appear in `tools/list` (from → to). */
  renames = new Map<string, string>();
  /** Tools whose input schema carries an extra optional field (changes its schema hash). */
  alteredSchemas = new Set<string>();
  /** Refunds made, by the tool or by hand (`get_order` and `find_refund` read them). */
  refunds: CrmRefund[] = [];
  /** Tools whose next answers are lost: applied, then the connection drops before the answer. */
  drops = new Map<string, Rule>();
  /** Tools whose next requests are lost: the connection drops before the call runs (no effect). */
  lostRequests = new Map<string, Rule>();
  private idempotency = new Map<string, { tool: string; argsJson: string; result: unknown }>();
  private nextTicket = 981;
  private nextRefund = 1001;
  private nextEmail = 1;

  // overRefunds `refuse`: a refund beyond what is left of the order is a tool error with no effect, as a
  // payment system's; `allow`: made anyway (the soak and the bench refund one order hundreds of times)
  constructor(readonly overRefunds: 'refuse' | 'allow' = 'refuse') {}

  /** Back to the initial data; clears records, delays, failures, renames and schema changes. */
  reset(): void {
    Object.assign(this, new CrmState(this.overRefunds));
  }

  addCustomer(customer: CrmCustomer): void {
    this.customers.set(customer.customerId, customer);
  }

  recordCall(tool: string, args: Record<string, unknown>, headerKey: string | null, metaKey: string | null) {
    const call: CrmCall = {
      seq: this.calls.length + 1,
      tool,
      key: headerKey ?? metaKey,
      headerKey,
      metaKey,
      args,
      at: new Date().toISOString(),
      receivedMs: performance.timeOrigin + performance.now(),
      status: 'pending',
    };
    this.calls.push(call);
    return call;
  }

  /** Someone refunds the order in the CRM directly (not through the agent): the order is refunded. */
  refundByHand(orderId: string): CrmRefund {
    const found = this.findOrder(orderId);
    if (!found) throw new Error(`Order ${orderId} not found`);
    const { amount, currency } = found.order;
    return this.addRefund({ orderId, amount, currency, key: null, byHand: true });
  }

  /** Runs a tool: the side effect (if any) is recorded before this returns. */
  execute(tool: string, args: Record<string, unknown>, key: string | null): ToolOutcome {
    const failure = takeRule(this.failures, tool);
    if (failure) return { ok: false, message: failure.message };
    if (tool === 'get_customer') return this.getCustomer(String(args.customerId));
    if (tool === 'get_order') return this.getOrder(String(args.orderId));
    if (tool === 'find_refund') return this.findRefunds(String(args.orderId), args.key);
    if (!KEYED_WRITES.has(tool) || key === null) return this.write(tool, args, null);
    const argsJson = canonicalJson(args);
    const stored = this.idempotency.get(key);
    if (stored) {
      if (stored.tool !== tool || stored.argsJson !== argsJson) {
        return {
          ok: false,
          message: `Idempotency key ${key} was already used with ${stored.tool === tool ? 'other arguments' : `tool ${stored.tool}`}`,
        };
      }
      return { ok: true, result: stored.result, replayed: true };
    }
    const outcome = this.write(tool, args, key);
    if (outcome.ok) this.idempotency.set(key, { tool, argsJson, result: outcome.result });
    return outcome;
  }

  countSideEffects(tool?: string): number {
    return this.sideEffects.filter((e) => tool === undefined || e.tool === tool).length;
  }

  countCalls(tool?: string): number {
    return this.calls.filter((c) => tool === undefined || c.tool === tool).length;
  }

  counts(): { calls: Record<string, number>; sideEffects: Record<string, number> } {
    const calls: Record<string, number> = {};
    const sideEffects: Record<string, number> = {};
    for (const c of this.calls) calls[c.tool] = (calls[c.tool] ?? 0) + 1;
    for (const e of this.sideEffects) sideEffects[e.tool] = (sideEffects[e.tool] ?? 0) + 1;
    return { calls, sideEffects };
  }

  snapshot() {
    return {
      sideEffects: this.sideEffects,
      calls: this.calls,
      counts: this.counts(),
      tickets: [...this.tickets.values()],
      refunds: this.refunds,
    };
  }

  private getCustomer(customerId: string): ToolOutcome {
    const customer = this.customers.get(customerId);
    if (!customer) return { ok: false, message: `Customer ${customerId} not found` };
    return { ok: true, result: structuredClone(customer) };
  }

  private findOrder(orderId: string): { order: CrmOrder; customerId: string } | null {
    for (const c of this.customers.values()) {
      const order = c.orders.find((o) => o.orderId === orderId);
      if (order) return { order, customerId: c.customerId };
    }
    return null;
  }

  private getOrder(orderId: string): ToolOutcome {
    const found = this.findOrder(orderId);
    if (!found) return { ok: false, message: `Order ${orderId} not found` };
    const refunded = this.refunds.filter((r) => r.orderId === orderId).reduce((n, r) => n + r.amount, 0);
    return {
      ok: true,
      result: { ...structuredClone(found.order), customerId: found.customerId, refundedAmount: refunded },
    };
  }

  /** The refunds of an order, only those sent with `key` when one is given. */
  private findRefunds(orderId: string, key: unknown): ToolOutcome {
    const refunds = this.refunds
      .filter((r) => r.orderId === orderId && (typeof key !== 'string' || r.key === key))
      .map(({ orderId: _, ...refund }) => refund);
    return { ok: true, result: { orderId, refunds } };
  }

  /** Why a refund of `amount` is refused (more than what is left of the order), or null. */
  private overRefund(orderId: string, amount: number): string | null {
    if (this.overRefunds === 'allow') return null;
    const found = this.findOrder(orderId);
    if (!found) return `Order ${orderId} not found`;
    const made = this.refunds.filter((r) => r.orderId === orderId);
    const left = found.order.amount - made.reduce((n, r) => n + r.amount, 0);
    if (amount <= left) return null;
    return (
      `Refund refused: order ${orderId} has ${left} ${found.order.currency} left to refund ` +
      `(refunded already: ${made.map((r) => `${r.refundId} ${r.amount} ${r.currency}`).join(', ')})`
    );
  }

  private addRefund(made: Omit<CrmRefund, 'refundId' | 'at'>) {
    const refund: CrmRefund = { refundId: `R-${this.nextRefund++}`, ...made, at: new Date().toISOString() };
    this.refunds.push(refund);
    const found = this.findOrder(made.orderId);
    if (found) found.order.status = 'refunded';
    return refund;
  }

  private write(tool: string, args: Record<string, unknown>, key: string | null): ToolOutcome {
    const done = (result: unknown): ToolOutcome => {
      this.sideEffects.push({ tool, key, args, result, at: new Date().toISOString() });
      return { ok: true, result };
    };
    switch (tool) {
      case 'create_ticket': {
        const ticket: CrmTicket = {
          ticketId: `T-${this.nextTicket++}`,
          customerId: String(args.customerId),
          subject: String(args.subject),
          priority: args.priority as CrmTicket['priority'],
          status: 'open',
        };
        this.tickets.set(ticket.ticketId, ticket);
        return done({ ...ticket });
      }
      case 'refund': {
        const refused = this.overRefund(String(args.orderId), Number(args.amount));
        if (refused) return { ok: false, message: refused };
        const { refundId, orderId, currency } = this.addRefund({
          orderId: String(args.orderId),
          amount: Number(args.amount),
          currency: String(args.currency),
          key,
          byHand: false,
        });
        return done({ refundId, orderId, amount: args.amount, currency, status: 'refunded' });
      }
      case 'close_ticket': {
        const ticket = this.tickets.get(String(args.ticketId));
        if (!ticket) return { ok: false, message: `Ticket ${String(args.ticketId)} not found` };
        ticket.status = 'closed';
        return done({ ...ticket });
      }
      case 'send_email':
        return done({
          messageId: `M-${this.nextEmail++}`,
          to: args.to,
          subject: args.subject,
          status: 'sent',
        });
      default:
        return { ok: false, message: `Unknown tool ${tool}` };
    }
  }
}

/** Takes one call from a tool's rule: the rule, or undefined when the tool has none. */
export function takeRule<T extends Rule>(rules: Map<string, T>, tool: string): T | undefined {
  const rule = rules.get(tool);
  if (rule?.remaining !== undefined && --rule.remaining <= 0) rules.delete(tool);
  return rule;
}
