/**
 * The model endpoint's 429 and 5xx (issue 14): the worker's model client asks the same model again after
 * the wait `Retry-After` names (bounded: at most MODEL_TRIES tries, no wait over MAX_RETRY_AFTER_MS),
 * and only then reports the model unavailable, so that the next fallback model is tried; a 429, or a 503
 * with Retry-After, is marked "later" (the worker defers the task when no fallback is left). Against the
 * real scripted model server over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, type Script, startModelServer } from '../../server/demo/model-server.js';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { workerConfig } from '../../server/worker/config.js';
import { MODEL_TRIES, ModelClient, ModelUnavailableError, retryAfterMs } from '../../server/worker/model.js';

let model: ModelServer;
let client: ModelClient;

/** The first answers of the script replaced by the given refusals, in order. */
function refusing(...refusals: { status: number; retryAfter?: string }[]): Script {
  let n = 0;
  return (req) => {
    const r = refusals[n++];
    if (!r) return supportTriageScript(req);
    return {
      status: r.status,
      body: { error: { message: `HTTP ${r.status} injected`, type: 'rate_limit', code: null } },
      headers: r.retryAfter === undefined ? {} : { 'retry-after': r.retryAfter },
    };
  };
}

const MESSAGES = [
  { role: 'system' as const, content: 'triage' },
  { role: 'user' as const, content: '<input name="customerId">C-42</input>' },
];

beforeAll(async () => {
  model = await startModelServer();
  client = new ModelClient(
    workerConfig({ engineUrl: 'http://127.0.0.1:1', token: 't', modelBaseUrl: model.url }),
  );
});
afterAll(() => model?.close());

describe('model 429 / 5xx', () => {
  it('waits Retry-After (429, then 503) and gets the answer from the same model', async () => {
    model.reset();
    model.setScript(refusing({ status: 429, retryAfter: '1' }, { status: 503, retryAfter: '0' }));
    const answer = await client.chat('gpt-4.1-mini', MESSAGES, []);
    expect(answer.message.tool_calls?.[0]?.function.name).toBe('crm__get_customer');
    expect(model.callCount).toBe(3);
    const gap = Date.parse(model.calls[1].at) - Date.parse(model.calls[0].at);
    expect(gap).toBeGreaterThanOrEqual(950); // Retry-After: 1 was honoured
  });

  it('gives up after MODEL_TRIES tries: the model is unavailable (the next fallback is tried)', async () => {
    model.reset();
    model.setScript(
      refusing(...Array.from({ length: MODEL_TRIES }, () => ({ status: 502, retryAfter: '0' }))),
    );
    await expect(client.chat('gpt-4.1-mini', MESSAGES, [])).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(model.callCount).toBe(MODEL_TRIES);
  });

  it('does not wait a Retry-After beyond the bound: unavailable at once', async () => {
    model.reset();
    model.setScript(refusing({ status: 429, retryAfter: '3600' }));
    await expect(client.chat('gpt-4.1-mini', MESSAGES, [])).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(model.callCount).toBe(1);
  });

  it('tells "later" (429, or 503 with Retry-After: the worker defers) from unavailability', async () => {
    const refusal = async (status: number, retryAfter?: string) => {
      model.reset();
      model.setScript(refusing({ status, retryAfter }));
      const e = await client.chat('gpt-4.1-mini', MESSAGES, []).then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(ModelUnavailableError);
      return e as ModelUnavailableError;
    };
    expect(await refusal(503, '3600')).toMatchObject({ notNow: true, retryAfterMs: 3_600_000, status: 503 });
    expect(await refusal(429, '60')).toMatchObject({ notNow: true, retryAfterMs: 60_000 });
    model.setScript(refusing(...Array.from({ length: MODEL_TRIES }, () => ({ status: 503 }))));
    model.reset();
    const plain = await client.chat('gpt-4.1-mini', MESSAGES, []).then(
      () => null,
      (err: unknown) => err as ModelUnavailableError,
    );
    expect(plain).toMatchObject({ notNow: false, status: 503 });
  }, 30_000);

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 01 Dec 2026 10:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBe(0);
    expect(retryAfterMs(new Headers(), now)).toBe(0);
  });
});
