/**
 * LangGraph as a peer (a child process of the bench): the agent task as a StateGraph of five nodes in a
 * line, compiled with `PostgresSaver` on the bench's PostgreSQL (`PEER_DATABASE_URL`, its own database),
 * each task its own `thread_id`. The window's mode is the run's `durability`: `async` (LangGraph's
 * default: a step's checkpoint is written while the next step runs) or `sync` (written before it starts).
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { createTicket, getCustomer, model, type StepAnswer } from './agent.js';
import { POOL_SIZE, peerDatabaseUrl, servePeer } from './child.js';

const pool = new pg.Pool({ connectionString: peerDatabaseUrl(), max: POOL_SIZE });
pool.on('error', (e) => console.error(`langgraph peer: idle connection failed: ${e.message}`));
const checkpointer = new PostgresSaver(pool);
await checkpointer.setup();

const State = Annotation.Root({
  customerId: Annotation<string>,
  // each step's answer, appended: the conversation the next model call would read
  answers: Annotation<StepAnswer[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
type S = typeof State.State;

const graph = new StateGraph(State)
  .addNode('model_1', async (s: S) => ({ answers: [await model(1, s.customerId)] }))
  .addNode('get_customer', async (s: S) => ({ answers: [await getCustomer(s.customerId)] }))
  .addNode('model_2', async (s: S) => ({ answers: [await model(2, s.customerId)] }))
  .addNode('create_ticket', async (s: S) => ({ answers: [await createTicket(s.customerId)] }))
  .addNode('model_3', async (s: S) => ({ answers: [await model(3, s.customerId)] }))
  .addEdge(START, 'model_1')
  .addEdge('model_1', 'get_customer')
  .addEdge('get_customer', 'model_2')
  .addEdge('model_2', 'create_ticket')
  .addEdge('create_ticket', 'model_3')
  .addEdge('model_3', END)
  .compile({ checkpointer });

/** The run's durability, from the window's mode. */
function durability(mode: string): 'async' | 'sync' {
  if (mode === 'async' || mode === 'sync') return mode;
  throw new Error(`langgraph peer: unknown mode ${mode} (async or sync)`);
}

await servePeer({
  pool,
  task: async (n, mode) => {
    const out = await graph.invoke(
      { customerId: `C-${n}` },
      { configurable: { thread_id: `${process.pid}-${mode}-${n}` }, durability: durability(mode) },
    );
    if (out.answers.length !== 5) throw new Error(`langgraph peer: ${out.answers.length} answers, not 5`);
  },
  close: () => pool.end(),
});
