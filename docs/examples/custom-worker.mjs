// A worker for your own agent loop on Abada's typed client: docs/custom-worker.md explains each part.
import { createHash } from 'node:crypto';
import { CompleteTask, createClient, FailTask, FetchAndLock, JournalStep, RegisterWorker } from 'abada/client';

const engine = createClient({ url: process.env.ABADA_URL, token: process.env.ABADA_TOKEN });
const workerId = process.env.ABADA_WORKER_ID ?? `my-loop-${process.pid}`;
const topics = [{ topicName: 'abada:agent', lockDurationMs: 60_000 }];
let running = true;
process.on('SIGTERM', () => {
  running = false;
});

/** Your agent loop (LangGraph, CrewAI, a service of yours…); here one OpenAI-compatible chat call. */
async function myAgentLoop(work) {
  const res = await fetch(`${process.env.MODEL_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.MODEL_API_KEY}` },
    body: JSON.stringify({
      model: work.model,
      messages: [
        { role: 'system', content: work.prompt },
        { role: 'user', content: JSON.stringify(work.inputs) },
      ],
    }),
  });
  if (!res.ok) throw new Error(`the model answered HTTP ${res.status}`);
  const { choices, usage } = await res.json();
  return { message: choices[0].message, usage };
}

async function run(task) {
  const work = task.agentWork;
  const lease = { taskId: task.id, workerId, attempt: task.attempt };
  const request = { model: work.model, promptSha256: createHash('sha256').update(work.prompt).digest('hex') };
  const step = { ...lease, sequence: 1, kind: 'MODEL_CALL', model: work.model, request };
  // Journal before and after acting: a later lease finds the finished call in task.steps, not again.
  let message = task.steps.find((s) => s.sequence === 1 && s.state === 'COMPLETED')?.response;
  if (!message) {
    await engine.request(JournalStep, { input: { ...step, state: 'STARTED' } });
    const out = await myAgentLoop(work);
    message = out.message;
    const usage = { inputTokens: out.usage?.prompt_tokens, outputTokens: out.usage?.completion_tokens };
    await engine.request(JournalStep, { input: { ...step, state: 'COMPLETED', response: message, usage } });
  }
  const value = JSON.parse(message.content);
  const metadata = { model: work.model, attempt: task.attempt, resultVariable: work.resultVariable };
  const variables = { [work.resultVariable]: value };
  await engine.request(CompleteTask, { input: { ...lease, variables, metadata } });
}

await engine.request(RegisterWorker, { input: { workerId, topics: topics.map((t) => t.topicName) } });
while (running) {
  const input = { workerId, maxTasks: 1, topics, asyncResponseTimeoutMs: 5_000 };
  for (const task of (await engine.request(FetchAndLock, { input })).fetchAndLock) {
    await run(task).catch((e) => {
      const errorMessage = String(e?.message ?? e);
      const failure = { taskId: task.id, workerId, attempt: task.attempt, errorType: 'MY_LOOP_FAILED' };
      return engine.request(FailTask, { input: { ...failure, errorMessage } });
    });
  }
}
