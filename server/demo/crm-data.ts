/** The demo CRM's records (customers, orders, tickets, refunds, calls) and its seeded customers. */
export type CrmToolName =
  | 'get_customer'
  | 'get_order'
  | 'find_refund'
  | 'create_ticket'
  | 'refund'
  | 'close_ticket'
  | 'send_email';
/** Writes that honour an idempotency key (`send_email` is a write that ignores keys on purpose). */
export const KEYED_WRITES: ReadonlySet<string> = new Set(['create_ticket', 'refund', 'close_ticket']);

export interface CrmOrder {
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
export interface CrmTicket {
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

export type CrmCallStatus = 'pending' | 'ok' | 'replayed' | 'error';
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
  status: CrmCallStatus;
  result?: unknown;
  error?: string;
}

export type ToolOutcome = { ok: true; result: unknown; replayed: boolean } | { ok: false; message: string };

export interface DelayRule {
  ms: number;
  /** How many more calls to delay; undefined = every call. */
  remaining?: number;
}
export interface FailRule {
  message: string;
  remaining: number;
}

export function defaultCustomers(): CrmCustomer[] {
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
