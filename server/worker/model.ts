/**
 * Models through the `openai` package (OpenAI-compatible chat completions). `gemini/` and `google/`
 * prefixes route to the Gemini OpenAI-compatible endpoint with the prefix stripped; every other model
 * goes to ABADA_MODEL_BASE_URL under its own name. No SDK retries (the worker decides: a model that is
 * unavailable is journaled FAILED and the next fallback model tried), and an explicit timeout.
 */
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { traceHeaders } from '../telemetry/index.js';
import type { WorkerConfig } from './config.js';
import { assistantMessage, type FunctionTool, type Message } from './conversation.js';

export interface ModelRoute {
  provider: 'gemini' | 'openai-compatible';
  baseURL: string | null;
  apiKey: string | null;
  /** The model name sent to the API. */
  apiModel: string;
}

export function routeModel(model: string, config: WorkerConfig): ModelRoute {
  const m = /^(gemini|google)\/(.+)$/.exec(model);
  if (m) {
    return {
      provider: 'gemini',
      baseURL: config.geminiBaseUrl,
      apiKey: config.geminiApiKey,
      apiModel: m[2],
    };
  }
  return {
    provider: 'openai-compatible',
    baseURL: config.modelBaseUrl,
    apiKey: config.modelApiKey,
    apiModel: model,
  };
}

export interface ModelAnswer {
  message: Extract<Message, { role: 'assistant' }>;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  provider: string;
}

/** The model could not answer now (5xx, 429, 404, connection error, timeout): try the next model. */
export class ModelUnavailableError extends Error {
  override name = 'ModelUnavailableError';
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

  private client(route: ModelRoute): OpenAI {
    const key = `${route.baseURL}\n${route.apiKey ?? ''}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new OpenAI({
        baseURL: route.baseURL!,
        // Local OpenAI-compatible servers often need no key; the SDK insists on a string.
        apiKey: route.apiKey ?? 'no-key',
        maxRetries: 0,
        timeout: this.config.modelTimeoutMs,
      });
      this.clients.set(key, c);
    }
    return c;
  }

  async chat(
    model: string,
    messages: Message[],
    tools: FunctionTool[],
    signal?: AbortSignal,
  ): Promise<ModelAnswer> {
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
        if (s >= 500 || s === 429 || s === 404 || s === 408)
          throw new ModelUnavailableError(`${model}: HTTP ${s} ${e.message}`);
        throw new ModelRequestError(`${model}: HTTP ${s} ${e.message}`);
      }
      throw e;
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new ModelUnavailableError(`${model}: the answer held no choice`);
    const message = assistantMessage({
      content: choice.message.content,
      tool_calls: (choice.message.tool_calls ?? []).flatMap((c) =>
        c.type === 'function' ? [{ id: c.id, type: c.type, function: c.function }] : [],
      ),
    });
    const input = completion.usage?.prompt_tokens ?? 0;
    const output = completion.usage?.completion_tokens ?? 0;
    return {
      message,
      usage: {
        inputTokens: input,
        outputTokens: output,
        totalTokens: completion.usage?.total_tokens ?? input + output,
      },
      provider: route.provider,
    };
  }
}
