/** The small scenario /metrics is read after: one support-triage task completed, one refund waiting. */
import type { TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import type { WorkerSim } from '../helpers/worker-sim.js';

export async function oneDoneOneWaiting(engine: TestEngine, sim: WorkerSim): Promise<void> {
  await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-1' } });
  const t1 = await sim.fetchOne();
  await sim.model(t1, 1, 'STARTED');
  await sim.model(t1, 1, 'COMPLETED');
  await sim.complete(t1, { triage: { ticketId: 'T-1', priority: 'low', _confidence: 95 } });
  await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
  const t2 = await sim.fetchOne();
  await sim.model(t2, 1, 'STARTED');
  await sim.model(t2, 1, 'COMPLETED');
  await sim.tool(t2, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });
}
