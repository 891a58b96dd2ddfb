/**
 * Shared setup for the authority-by-the-call tests (SPEC §14): a `shop` ToolServer whose refund runs by
 * itself at or below 20, needs finance above, two levels above 1000 and is refused above 5000, with a
 * schema and a `validate`; a write with its own checks and a deny; a guarded refund; and a node that
 * tightens (drop_auto, a deny of its own).
 */
import { graphql } from '../../../server/client/index.js';
import type { TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import type { Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { D } from './setup.js';

export const SHOP = `
kind: ToolServer
name: shop
transport: streamable-http
url: http://127.0.0.1:4197/mcp
tools:
  get_order: { policy: read }
  refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    editable: true
    approval_timeout_hours: 1
    approval_valid_minutes: 30
    input_schema:
      type: object
      required: [orderId, amount]
      properties: { orderId: { type: string }, amount: { type: number } }
    validate:
      - { expect: "amount > 0", message: "the amount must be positive" }
    approval:
      - { when: "amount <= 20", auto: true }
      - { when: "amount > 1000", levels: [finance, finance-leads] }
      - { when: "amount > 5000", deny: "refunds above 5000 EUR go through the finance desk" }
  coupon:
    policy: write
    idempotency: key
    validate:
      - { expect: "percent > 0 && percent <= 100", message: "a coupon is between 1 and 100 percent" }
    approval:
      - { when: "percent > 50", deny: "coupons above 50 percent need a campaign" }
  guarded_refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    precondition:
      tool: shop/get_order
      arguments: { orderId: "\${arguments.orderId}" }
      expect: "status == 'PAID'"
`;

/** A process on its own topic; `tight` narrows the refund on the node. */
export const shopProcess = (key: string, tight = false) => `
kind: Process
key: ${key}
variables: { customerId: { type: string } }
start: work
nodes:
  - id: work
    type: agent
    topic: ${key}
    model: gemini-3.6-flash
    prompt: Settle the customer's request.
    tools:
      - shop/get_order
      - ${
        tight
          ? '{ ref: shop/refund, drop_auto: true, approval: [{ when: "amount > 100", deny: "this desk refunds up to 100 EUR" }] }'
          : 'shop/refund'
      }
      - shop/coupon
      - shop/guarded_refund
    result_variable: outcome
    next: done
  - { id: done, type: end }
`;

export async function deployShop(engine: TestEngine, keys: string[], tight: string[] = []) {
  const docs = [SHOP, ...keys.map((k) => shopProcess(k)), ...tight.map((k) => shopProcess(k, true))];
  await engine.ok(engine.adminToken, Q.deploy, { s: docs.join('---') });
}

/** Starts `key` and takes its task. */
export async function started(w: WorkerSim, key: string, starter = w.engine.adminToken) {
  const s = await w.engine.ok(starter, Q.start, { key, v: { customerId: 'C-42' } });
  return { instanceId: s.startProcess.id as string, task: await w.fetchOne({ topic: key }) };
}

/** A precondition read journaled just before a proposal (SPEC §11). */
export function preconditionRead(
  w: WorkerSim,
  task: Locked,
  sequence: number,
  orderId: string,
  answer: unknown,
) {
  return w.engine.gql(w.token, D.journal, {
    input: {
      taskId: task.id,
      workerId: w.workerId,
      attempt: task.attempt,
      sequence,
      kind: 'TOOL_CALL',
      state: 'COMPLETED',
      toolRef: 'shop/get_order',
      purpose: 'PRECONDITION',
      request: { callId: `call_${sequence}`, arguments: { orderId } },
      response: answer,
    },
  });
}

export const APPROVAL_FULL =
  graphql(`query($id: ID!) { approval(id: $id) { id state version level levels candidateGroups
  digest decidedBy arguments expiresAt validUntil
  rule { index when auto deny levels { groups } }
  versions { version digest editedBy arguments changes { path before after } }
  decisions { version level decidedBy decision outcome action digest editedDigest } } }`);

export async function audit(engine: TestEngine, instanceId: string) {
  const r = await engine.ok(
    engine.adminToken,
    'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }',
    { id: instanceId },
  );
  return r.verifyAudit.valid as boolean;
}
