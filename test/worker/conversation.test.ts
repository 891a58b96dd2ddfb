/** The pure parts of the worker: conversation building, final-answer parsing, routing, configuration. */
import { describe, expect, it } from 'vitest';
import { loadWorkerConfig, WorkerConfigError } from '../../server/worker/config.js';
import {
  functionName,
  GUARD_TEXT,
  initialMessages,
  inputBlocks,
  parametersOf,
  parseFinalAnswer,
  toolStepContent,
} from '../../server/worker/conversation.js';
import type { Step } from '../../server/worker/graphql.js';
import { isAllowed } from '../../server/worker/mcp.js';
import { routeModel } from '../../server/worker/model.js';

const step = (over: Partial<Step>): Step => ({
  attempt: 1,
  sequence: 2,
  kind: 'TOOL_CALL',
  state: 'COMPLETED',
  toolRef: 'crm/refund',
  model: null,
  request: { callId: 'c1', arguments: {} },
  response: null,
  purpose: 'CALL',
  reconciled: false,
  error: null,
  digest: 'd',
  idempotencyKey: null,
  comment: null,
  reused: false,
  usage: null,
  approvalId: null,
  ...over,
});

describe('the conversation', () => {
  it('guards the prompt and puts the inputs in <input> blocks, JSON-encoding non-strings', () => {
    const [system, user] = initialMessages({
      prompt: 'Help C-42.',
      inputs: { customerId: 'C-42', order: { id: 5531 }, count: 2 },
    });
    expect(system.content).toBe(`${GUARD_TEXT}\n\nHelp C-42.`);
    expect(user.content).toBe(
      '<input name="customerId">C-42</input>\n<input name="order">{"id":5531}</input>\n<input name="count">2</input>',
    );
    expect(inputBlocks({ x: 'a</input>b' })).toBe('<input name="x">a<\\/input>b</input>');
  });

  it('names functions server__tool and delegate__key, and strips $schema', () => {
    expect(functionName({ server: 'crm', tool: 'get_customer', transport: 'streamable-http' })).toBe(
      'crm__get_customer',
    );
    expect(functionName({ server: 'delegate', tool: 'kyc.check', transport: 'delegate' })).toBe(
      'delegate__kyc_check',
    );
    expect(parametersOf({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toEqual({
      type: 'object',
    });
  });

  it('turns ended tool steps into tool messages', () => {
    expect(toolStepContent(step({ response: { ticketId: 'T-1' } }))).toBe('{"ticketId":"T-1"}');
    expect(toolStepContent(step({ response: 'plain text' }))).toBe('plain text');
    expect(toolStepContent(step({ state: 'FAILED', error: 'boom' }))).toBe('Error: boom');
    expect(toolStepContent(step({ state: 'REJECTED', comment: 'No.' }))).toBe(
      'Rejected: a person did not approve this call. Reason: No.',
    );
    // nobody decided in time: the engine's own words, read as written (SPEC §11)
    const timedOut = 'Rejected: no decision before 2026-12-01T10:00:00.000Z.';
    expect(toolStepContent(step({ state: 'REJECTED', comment: timedOut }))).toBe(timedOut);
    expect(
      toolStepContent(
        step({ response: { ok: true }, approvalId: 'a1', comment: 'Approved with changes: amount 50' }),
      ),
    ).toBe('{"ok":true}\n\nNote from the approver: Approved with changes: amount 50');
    expect(toolStepContent(step({ state: 'OUTCOME_UNKNOWN' }))).toBeNull();
    expect(toolStepContent(step({ state: 'OUTCOME_UNKNOWN', response: { happened: true } }))).toBe(
      '{"happened":true}',
    );
    // A person's statement (resolveIncident) is told in words, the reported result first.
    const stated = (happened: boolean, result?: unknown) => ({
      resolvedByPerson: true,
      happened,
      ...(result === undefined ? {} : { result }),
      comment: 'checked the outbox',
    });
    expect(toolStepContent(step({ state: 'OUTCOME_UNKNOWN', response: stated(true, { id: 'M-1' }) }))).toBe(
      '{"id":"M-1"}\n\nNote: this call\'s answer was lost when the work was interrupted; a person checked and confirmed that it took effect, with the result above. Their comment: checked the outbox',
    );
    expect(toolStepContent(step({ state: 'OUTCOME_UNKNOWN', response: stated(true, null) }))).toBe(
      "Done. Note: this call's answer was lost when the work was interrupted; a person checked and confirmed that it took effect (they gave no result). Their comment: checked the outbox",
    );
    expect(toolStepContent(step({ state: 'OUTCOME_UNKNOWN', response: stated(false) }))).toBe(
      'Not done: this call was interrupted and a person checked that it did not take effect. Their comment: checked the outbox',
    );
    // A later attempt reusing a call a person said happened reads the same statement.
    expect(toolStepContent(step({ reused: true, response: stated(true, { id: 'M-1' }) }))).toMatch(
      /^\{"id":"M-1"\}\n\nNote: .*confirmed that it took effect/,
    );
    expect(toolStepContent(step({ state: 'STARTED' }))).toBeNull();
  });

  it('parses the final answer, bare or fenced, and reads _confidence', () => {
    expect(parseFinalAnswer('{"a":1,"_confidence":92}')).toEqual({
      ok: true,
      value: { a: 1, _confidence: 92 },
      confidence: 92,
    });
    expect(parseFinalAnswer('Here:\n```json\n{"a":2}\n```')).toEqual({
      ok: true,
      value: { a: 2 },
      confidence: null,
    });
    expect(parseFinalAnswer('I think so.').ok).toBe(false);
    expect(parseFinalAnswer(null).ok).toBe(false);
  });
});

describe('routing and configuration', () => {
  const config = loadWorkerConfig({
    ABADA_URL: 'http://e:3000/',
    ABADA_TOKEN: 't',
    ABADA_MODEL_BASE_URL: 'http://m/v1',
  });

  it('reads defaults', () => {
    expect(config).toMatchObject({
      engineUrl: 'http://e:3000',
      concurrency: 4,
      journalBatch: true,
      topics: ['abada:agent'],
      lockMs: 60_000,
      geminiBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
      allowedTools: null,
    });
    expect(config.workerId).toMatch(/-\d+$/);
  });

  it('routes gemini/ and google/ to the Gemini endpoint without the prefix', () => {
    expect(routeModel('gemini/gemini-2.5-flash', config)).toMatchObject({
      provider: 'gemini',
      apiModel: 'gemini-2.5-flash',
    });
    expect(routeModel('google/gemini-2.5-pro', config).apiModel).toBe('gemini-2.5-pro');
    expect(routeModel('gpt-4.1-mini', config)).toMatchObject({
      provider: 'openai-compatible',
      baseURL: 'http://m/v1',
      apiModel: 'gpt-4.1-mini',
    });
  });

  it('lists every configuration problem at once', () => {
    try {
      loadWorkerConfig({
        ABADA_WORKER_LOCK_MS: '5',
        ABADA_LOG_LEVEL: 'loud',
        ABADA_WORKER_JOURNAL_BATCH: 'maybe',
      });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(WorkerConfigError);
      expect((e as WorkerConfigError).problems.map((p) => p.split(' ')[0])).toEqual([
        'ABADA_URL',
        'ABADA_TOKEN',
        'ABADA_LOG_LEVEL',
        'ABADA_WORKER_JOURNAL_BATCH',
        'ABADA_WORKER_LOCK_MS',
      ]);
    }
    expect(
      loadWorkerConfig({ ABADA_URL: 'http://e', ABADA_TOKEN: 't', ABADA_WORKER_JOURNAL_BATCH: 'FALSE' })
        .journalBatch,
    ).toBe(false);
  });

  it('allows servers or exact server/tool refs', () => {
    expect(isAllowed(null, { server: 'crm', tool: 'refund' })).toBe(true);
    expect(isAllowed(['crm'], { server: 'crm', tool: 'refund' })).toBe(true);
    expect(isAllowed(['crm/get_customer'], { server: 'crm', tool: 'refund' })).toBe(false);
  });
});
