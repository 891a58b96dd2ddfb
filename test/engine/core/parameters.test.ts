/**
 * Values travel as parameters of named statements, never inside statement text: what a history row
 * carries comes back exactly as written, whatever it holds — quotes, backslashes, dollar-quote tags,
 * an attempt at SQL, control characters.
 */
import { asc, eq } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { history, historyEvents } from '../../../server/db/schema.js';
import { appendHistory } from '../../../server/engine/history/index.js';
import { Q } from '../../helpers/fixtures.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

let engine: TestEngine;
let instanceId: string;

const TEXTS = [
  '',
  `it's a "quote" and a back\\slash \\' and \\\\`,
  'ends with a dollar $',
  '$$ $j$ $j0$',
  "'); DROP TABLE history; --",
  'line\nbreak\ttab \u00e9 \u{1F600} \u0001',
];

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: 'kind: Process\nkey: p\nstart: w\nnodes:\n  - { id: w, type: service, topic: p, next: done }\n  - { id: done, type: end }\n',
  });
  instanceId = (await engine.ok(engine.adminToken, Q.start, { key: 'p' })).startProcess.id;
});
afterAll(() => engine?.close());

describe('values as parameters', () => {
  it('a history row holds exactly the texts it was given, and the chain still verifies', async () => {
    const [first] = await engine.context.db
      .select()
      .from(history)
      .where(eq(history.processInstanceId, instanceId));
    await appendHistory(
      engine.context.db,
      ...TEXTS.map((text, i) => ({
        projectId: first.projectId,
        processInstanceId: instanceId,
        eventType: 'TEST_TEXT',
        actor: `tester ${text}`,
        data: { i, text, nested: { list: [text] }, id: randomUUID() },
      })),
    );
    const rows = await engine.context.db
      .select()
      .from(historyEvents)
      .where(eq(historyEvents.processInstanceId, instanceId))
      .orderBy(asc(historyEvents.seq), asc(historyEvents.idx));
    const texts = rows.filter((r) => r.eventType === 'TEST_TEXT');
    expect(texts.map((r) => (r.data as { text: string }).text)).toEqual(TEXTS);
    expect(texts.map((r) => r.actor)).toEqual(TEXTS.map((t) => `tester ${t}`));
    const audit = await engine.ok(
      engine.adminToken,
      'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }',
      { id: instanceId },
    );
    expect(audit.verifyAudit.valid).toBe(true);
  });
});
