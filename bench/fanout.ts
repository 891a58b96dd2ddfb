/**
 * 5. Approval fan-out: proposal commit → approvalOpened received, with 1, 100 and 1,000 graphql-ws
 * subscribers spread over two engine processes, with the engines' CPU and RSS meanwhile. Latency is
 * measured from the moment the proposal is sent (an upper bound of commit → event).
 */
import { type EngineProc, type gqlClient, procStats, summarize, wsClient } from './lib.js';

type Client = ReturnType<typeof gqlClient>;

export async function fanOut(o: {
  engines: EngineProc[];
  admin: Client;
  worker: Client;
  smoke: boolean;
  seconds: number;
}) {
  const human = (
    await o.admin(
      `mutation { createPrincipal(input: {kind: HUMAN, name: "fiona", groups: ["finance"]}) { token } }`,
    )
  ).createPrincipal.token as string;
  const out = [];
  for (const subscribers of o.smoke ? [1, 10] : [1, 100, 1000]) {
    const received = new Map<string, number[]>();
    const clients = Array.from({ length: subscribers }, (_, i) =>
      wsClient(o.engines[i % o.engines.length].url, human),
    );
    let ready = 0;
    const disposers = clients.map((c) =>
      c.subscribe<{ approvalOpened: { id: string } }>(
        { query: 'subscription { approvalOpened { id toolRef digest } }' },
        {
          next: (msg) => {
            const id = msg.data?.approvalOpened.id;
            if (id) {
              const arr = received.get(id) ?? [];
              arr.push(performance.now());
              received.set(id, arr);
            }
          },
          error: () => {},
          complete: () => {},
        },
      ),
    );
    await Promise.all(
      clients.map(
        (c) =>
          new Promise<void>((r) =>
            c.on('connected', () => {
              ready++;
              r();
            }),
          ),
      ),
    );
    await new Promise((r) => setTimeout(r, 300 + subscribers));
    const before = await Promise.all(o.engines.map((e) => procStats(e.child.pid!)));
    const proposals = o.smoke ? 3 : 20;
    const sent = new Map<string, number>();
    for (let i = 0; i < proposals; i++) {
      await o.admin(`mutation { startProcess(key: "bench", variables: {n: ${i}}) { id } }`);
      const [t] = (
        await o.worker(
          `mutation { fetchAndLock(input: {workerId: "fanout", maxTasks: 1, topics: [{topicName: "abada:agent", lockDurationMs: 60000}]}) { id attempt } }`,
        )
      ).fetchAndLock;
      const t0 = performance.now();
      const r = await o.worker(
        `mutation($i: JournalStepInput!) { journalStep(input: $i) { step { approvalId } } }`,
        {
          i: {
            taskId: t.id,
            workerId: 'fanout',
            attempt: t.attempt,
            sequence: 1,
            kind: 'TOOL_CALL',
            state: 'PROPOSED',
            toolRef: 'crm/refund',
            request: { callId: 'c1', arguments: { orderId: `${i}`, amount: 89, currency: 'EUR' } },
          },
        },
      );
      sent.set(r.journalStep.step.approvalId, t0);
      await new Promise((res) => setTimeout(res, 50));
    }
    const deadline = Date.now() + 5000;
    while (
      Date.now() < deadline &&
      [...sent.keys()].some((id) => (received.get(id)?.length ?? 0) < subscribers)
    )
      await new Promise((r) => setTimeout(r, 50));
    const after = await Promise.all(o.engines.map((e) => procStats(e.child.pid!)));
    const lat: number[] = [];
    for (const [id, t0] of sent) for (const t of received.get(id) ?? []) lat.push(t - t0);
    const s = summarize(lat);
    out.push({
      subscribers,
      connected: ready,
      ...s,
      received: lat.length,
      expected: subscribers * proposals,
      engineRssMb: after.map((a) => a.rssMb),
      engineCpuMs: after.map((a, i) => a.cpuMs - before[i].cpuMs),
    });
    for (const d of disposers) d();
    await Promise.all(clients.map((c) => c.dispose()));
  }
  return out;
}
