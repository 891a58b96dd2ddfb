/**
 * Models through the `openai` package: `gemini/` and `google/` models go to the Gemini OpenAI-compatible
 * endpoint without the prefix, any other to ABADA_MODEL_BASE_URL. No SDK retries (the worker journals an
 * unavailable model FAILED and tries the next fallback), and an explicit timeout.
 */
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { traceHeaders } from '../telemetry/index.js';
import type { WorkerConfig } from './config.js';
import { httpFetch } from './http-fetch.js';
import { backoffMs, sleep } from './graphql.js';
import { assistantMessage, type FunctionTool, type Message } from './conversation.js';

export function routeModel(model: string, config: WorkerConfig) {
  const m = /^(gemini|google)\/(.+)$/.exec(model);
  return m
    ? { provider: 'gemini', baseURL: config.geminiBaseUrl, apiKey: config.geminiApiKey, apiModel: m[2] }
    : {
        provider: 'openai-compatible',
        baseURL: config.modelBaseUrl,
        apiKey: config.modelApiKey,
        apiModel: model,
      };
}

/** The model could not answer now (5xx, 429, 404, connection error, timeout): try the next model. */
export class ModelUnavailableError extends Error {
  override name = 'ModelUnavailableError';
  /**
   * `retryAfterMs`, for a 429 or 5xx: the wait before asking again (0 = no Retry-After); null = do not
   * ask again. `status`: the HTTP status, when the model answered one; `saidWhen`: it sent Retry-After.
   */
  constructor(
    message: string,
    readonly retryAfterMs: number | null = null,
    readonly status: number | null = null,
    readonly saidWhen = false,
  ) {
    super(message);
  }

  /**
   * The model said "not now, later": a 429 (a rate limit passes), or a 503 that named when to come
   * back. A 503 without Retry-After is unavailability with no end in sight: the next model, or a failure.
   */
  get notNow(): boolean {
    return this.status === 429 || (this.status === 503 && this.saidWhen);
  }
}

/** Tries of one model call answered 429 or 5xx before the next fallback model. */
export const MODEL_TRIES = 3;
/** A Retry-After longer than this is not waited for: the next fallback model is tried at once. */
export const MAX_RETRY_AFTER_MS = 20_000;

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number {
  const value = headers?.get('retry-after')?.trim();
  if (!value) return 0;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(at - now, 0);
}

/** The model refused the request for a reason another model would share (400, 401, 403…). */
export class ModelRequestError extends Error {
  override name = 'ModelRequestError';
}

export class ModelClient {
  private readonly clients = new Map<string, OpenAI>();

  constructor(private readonly config: WorkerConfig) {}

  /** Whether the model has an endpoint at all (a model without one is skipped, never journaled). */
  hasEndpoint(model: string): boolean {
    return routeModel(model, this.config).baseURL !== null;
  }

  providerOf(model: string): string {
    return routeModel(model, this.config).provider;
  }

  private client(route: ReturnType<typeof routeModel>): OpenAI {
    const key = `${route.baseURL}\n${route.apiKey ?? ''}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new OpenAI({
        baseURL: route.baseURL!,
        // Local OpenAI-compatible servers often need no key; the SDK insists on a string.
        apiKey: route.apiKey ?? 'no-key',
        maxRetries: 0,
        fetch: httpFetch,
        timeout: this.config.modelTimeoutMs,
      });
      this.clients.set(key, c);
    }
    return c;
  }

  /**
   * One model call. A 429 or 5xx is asked again, up to MODEL_TRIES times, after its `Retry-After` (else a
   * backoff from 1 s): a fallback model costs more than a second's wait. A wait over MAX_RETRY_AFTER_MS
   * makes the model unavailable (the next fallback; with none left the task is handed back for that long,
   * modelturns.ts). `beforeEach` runs before every send (the lease's local deadline).
   */
  async chat(
    model: string,
    messages: Message[],
    tools: FunctionTool[],
    signal?: AbortSignal,
    beforeEach?: () => Promise<void>,
  ) {
    for (let i = 0; ; i++) {
      await beforeEach?.();
      try {
        return await this.once(model, messages, tools, signal);
      } catch (e) {
        const wait = e instanceof ModelUnavailableError ? e.retryAfterMs : null;
        if (wait === null || wait > MAX_RETRY_AFTER_MS || i + 1 >= MODEL_TRIES || signal?.aborted) throw e;
        await sleep(wait > 0 ? wait : backoffMs(i, 1000, 8000), signal);
      }
    }
  }

  private async once(model: string, messages: Message[], tools: FunctionTool[], signal?: AbortSignal) {
    const route = routeModel(model, this.config);
    if (!route.baseURL) throw new ModelUnavailableError(`no endpoint is configured for model ${model}`);
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client(route).chat.completions.create(
        {
          model: route.apiModel,
          messages: messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
          ...(tools.length ? { tools: tools as OpenAI.Chat.Completions.ChatCompletionTool[] } : {}),
        },
        { signal, headers: traceHeaders() },
      );
    } catch (e) {
      if (e instanceof APIUserAbortError) throw e;
      if (e instanceof APIConnectionError) throw new ModelUnavailableError(`${model}: ${e.message}`);
      if (e instanceof APIError) {
        const s = e.status ?? 0;
        if (s >= 500 || s === 429)
          throw new ModelUnavailableError(
            `${model}: HTTP ${s} ${e.message}`,
            retryAfterMs(e.headers),
            s,
            e.headers?.has('retry-after') ?? false,
          );
        if (s === 404 || s === 408) throw new ModelUnavailableError(`${model}: HTTP ${s} ${e.message}`);
        throw new ModelRequestError(`${model}: HTTP ${s} ${e.message}`);
      }
      throw e;
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new ModelUnavailableError(`${model}: the answer held no choice`);
    const input = completion.usage?.prompt_tokens ?? 0;
    const output = completion.usage?.completion_tokens ?? 0;
    return {
      message: assistantMessage(choice.message),
      usage: {
        inputTokens: input,
        outputTokens: output,
        totalTokens: completion.usage?.total_tokens ?? input + output,
      },
    };
  }
}
