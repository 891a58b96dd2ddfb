/**
 * The agent task every peer runs, as Abada's headline runs its 002-shaped task: model, read
 * (`crm/get_customer`), model, write (`crm/create_ticket`), model. The model and the tools are in-process
 * stubs that answer a small fixed JSON at once (no network, no delay), so a window measures what the
 * peer and PostgreSQL spend making the five steps durable, and nothing else.
 */

export type StepAnswer = Record<string, unknown>;

/** The model's answer for turn 1, 2 or 3 (a tool call, another, then the final JSON). */
export async function model(turn: number, customerId: string): Promise<StepAnswer> {
  if (turn === 1)
    return { role: 'assistant', toolCall: { name: 'crm/get_customer', arguments: { customerId } } };
  if (turn === 2)
    return {
      role: 'assistant',
      toolCall: { name: 'crm/create_ticket', arguments: { customerId, subject: 'Parcel never arrived' } },
    };
  return { role: 'assistant', content: '{"ticketId":"T-1","priority":"high"}' };
}

/** The read tool. */
export async function getCustomer(customerId: string): Promise<StepAnswer> {
  return { customerId, name: `Customer ${customerId}`, tier: 'silver', orders: 2 };
}

/** The keyed write tool (the key is the peer's own step identity: it runs each step once). */
export async function createTicket(customerId: string): Promise<StepAnswer> {
  return { ticketId: 'T-1', customerId, status: 'open' };
}
