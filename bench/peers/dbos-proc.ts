/**
 * DBOS Transact as a peer (a child process of the bench): the agent task as one durable workflow of five
 * steps (`DBOS.runStep`), called directly as an application would, on DBOS's system database in the
 * bench's PostgreSQL (`PEER_DATABASE_URL`, its own database). DBOS records the workflow in
 * `workflow_status` and each step's output in `operation_outputs`, one row per step.
 */
import { DBOS, type DLogger } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { createTicket, getCustomer, model } from './agent.js';
import { POOL_SIZE, peerDatabaseUrl, servePeer } from './child.js';

const url = peerDatabaseUrl();
const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
pool.on('error', (e) => console.error(`dbos peer: idle connection failed: ${e.message}`));

// errors only: DBOS logs each launch and shutdown at info
const logger: DLogger = {
  info: () => {},
  debug: () => {},
  warn: (entry) => console.error('dbos peer:', entry),
  error: (entry) => console.error('dbos peer:', entry),
};

async function agentTask(customerId: string) {
  const first = await DBOS.runStep(() => model(1, customerId), { name: 'model' });
  const customer = await DBOS.runStep(() => getCustomer(customerId), { name: 'get_customer' });
  const second = await DBOS.runStep(() => model(2, customerId), { name: 'model' });
  const ticket = await DBOS.runStep(() => createTicket(customerId), { name: 'create_ticket' });
  const answer = await DBOS.runStep(() => model(3, customerId), { name: 'model' });
  return { turns: [first, second, answer], customer, ticket };
}
const agent = DBOS.registerWorkflow(agentTask, { name: 'agent' });

DBOS.setConfig({
  name: 'abada-bench',
  systemDatabaseUrl: url,
  // DBOS's own pool is this one: 16 connections, and the bench can flush their statistics
  systemDatabasePool: pool,
  logger,
});
await DBOS.launch();

await servePeer({
  pool,
  task: async (n) => {
    await agent(`C-${n}`);
  },
  close: async () => {
    await DBOS.shutdown();
    await pool.end();
  },
});
