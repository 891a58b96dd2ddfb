/**
 * A scripted OpenAI-compatible chat completions server (the demo's and the tests' "model").
 *
 *   POST /v1/chat/completions (and /chat/completions)   answers from the script; `stream: true` answers
 *                                                        SSE `chat.completion.chunk`s then `data: [DONE]`
 *   GET  /v1/models (and /models)                        a model list
 *   GET  /state                                          { callCount, calls }
 *
 * Every chat request is recorded (also the 503s); its usage is deterministic (`usageFor`).
 *
 * CLI: `node --import tsx server/demo/model-server.ts --port 4200 --script support-triage|refund|demo
 * [--latency-ms 1000]`
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { canonicalJson, sha256Hex } from '../shared/canonical.js';
import { cliArg, closeServer, isMainModule, listen, readJson, sendJson } from './http-util.js';
import {
  type ChatMessage,
  type ChatTool,
  type ChatToolCall,
  SCRIPTS,
  type Script,
  type ScriptAnswer,
  type ScriptRequest,
  supportTriageScript,
  textOf,
} from './scripts.js';

export type { Script } from './scripts.js';

export interface ModelServerOptions {
  port?: number;
  host?: string;
  /** Default: `supportTriageScript`. */
  script?: Script;
  /** Every chat answer is held this long (a model's think time; the bench uses 1,000 ms). Default 0. */
  latencyMs?: number;
}

export interface ModelCall extends ScriptRequest {
  answer: ScriptAnswer;
  stream: boolean;
  /** the W3C traceparent the caller sent (a tracing worker sends its model call's span) */
  traceparent: string | null;
  at: string;
  /** When the request was read and when its answer left (epoch ms, sub-ms precision): the bench's clock. */
  receivedMs: number;
  answeredMs?: number;
}

export class ModelServer {
  /** `http://127.0.0.1:<port>/v1` — the `baseURL` for the openai client. */
  url = '';
  baseUrl = '';
  port = 0;
  calls: ModelCall[] = [];
  script: Script;
  readonly models = ['gemini-3.6-flash', 'gpt-4.1-mini', 'scripted'];
  latencyMs: number;
  readonly http = createServer(route(this));

  constructor(opts: ModelServerOptions) {
    this.script = opts.script ?? supportTriageScript;
    this.latencyMs = opts.latencyMs ?? 0;
  }

  get callCount() {
    return this.calls.length;
  }

  reset() {
    this.calls = [];
  }

  setScript(script: Script) {
    this.script = script;
  }

  setLatency(ms: number) {
    this.latencyMs = ms;
  }

  close() {
    return closeServer(this.http);
  }
}

const COMPLETION_TOKENS = 20;

/** prompt_tokens = round(characters of message text and tool-call arguments / 4), completion_tokens = 20. */
export function usageFor(messages: ChatMessage[]) {
  let chars = 0;
  for (const m of messages) {
    chars += textOf(m.content).length;
    for (const c of m.tool_calls ?? []) chars += c.function.arguments.length;
  }
  const prompt = Math.max(1, Math.round(chars / 4));
  return {
    prompt_tokens: prompt,
    completion_tokens: COMPLETION_TOKENS,
    total_tokens: prompt + COMPLETION_TOKENS,
  };
}

/** Tool call ids `call_<n>`: n counts the tool calls already in the conversation, so replay is stable. */
function toolCallsFor(messages: ChatMessage[], calls: Extract<ScriptAnswer, { toolCalls: unknown }>) {
  const before = messages.reduce((n, m) => n + (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0), 0);
  return calls.toolCalls.map(
    (c, i): ChatToolCall => ({
      id: `call_${before + i + 1}`,
      type: 'function',
      function: {
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      },
    }),
  );
}

const nowMs = () => performance.timeOrigin + performance.now();

function errorBody(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

/** A chat request as the script sees it, or the 400 answer it gets instead. */
function readChat(body: Record<string, unknown>): ScriptRequest | { error: unknown } {
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    const param = typeof body.model !== 'string' ? 'model' : 'messages';
    return { error: errorBody(`Missing or invalid '${param}'`, 'invalid_request_error', null, param) };
  }
  return {
    model: body.model,
    messages: body.messages as ChatMessage[],
    tools: (Array.isArray(body.tools) ? body.tools : []) as ChatTool[],
  };
}

async function handleChat(rt: ModelServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const refusal = errorBody('The body must be JSON', 'invalid_request_error', 'invalid_json');
  const body = (await readJson(req, res, refusal)) as Record<string, unknown> | undefined;
  if (body === undefined) return;
  const request = readChat(body);
  if ('error' in request) return sendJson(res, 400, request.error);
  const stream = body.stream === true;
  let answer: ScriptAnswer;
  try {
    answer = rt.script(request);
  } catch (err) {
    return sendJson(res, 500, errorBody(`Script failed: ${String(err)}`, 'server_error', 'script_error'));
  }
  const call: ModelCall = {
    ...request,
    answer,
    stream,
    traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : null,
    at: new Date().toISOString(),
    receivedMs: nowMs(),
  };
  rt.calls.push(call);
  if (rt.latencyMs > 0) await new Promise((r) => setTimeout(r, rt.latencyMs));
  call.answeredMs = nowMs();
  if ('unavailable' in answer) {
    const message = answer.message ?? `The model ${request.model} is currently unavailable`;
    return sendJson(res, 503, errorBody(message, 'server_error', 'model_unavailable'));
  }
  if ('status' in answer) {
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    return sendJson(res, answer.status, answer.body);
  }
  const completion = completionOf(request, answer);
  if (!stream) sendCompletion(res, completion);
  else streamCompletion(res, completion, (body.stream_options as { include_usage?: boolean })?.include_usage);
}

type Completion = ReturnType<typeof completionOf>;

function completionOf(request: ScriptRequest, answer: ScriptAnswer) {
  const { model, messages } = request;
  const toolCalls =
    'toolCalls' in answer && answer.toolCalls.length > 0 ? toolCallsFor(messages, answer) : [];
  return {
    id: `chatcmpl-${sha256Hex(canonicalJson({ model, messages })).slice(0, 24)}`,
    created: Math.floor(Date.now() / 1000),
    model,
    content: ('content' in answer ? answer.content : null) ?? null,
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: usageFor(messages),
  };
}

function sendCompletion(res: ServerResponse, c: Completion) {
  const message: Record<string, unknown> = { role: 'assistant', content: c.content, refusal: null };
  if (c.toolCalls.length > 0) message.tool_calls = c.toolCalls;
  sendJson(res, 200, {
    id: c.id,
    object: 'chat.completion',
    created: c.created,
    model: c.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: c.finishReason }],
    usage: c.usage,
  });
}

/** Streaming: role, content, one chunk per tool call, the finish reason, optional usage, [DONE]. */
function streamCompletion(res: ServerResponse, c: Completion, includeUsage: boolean | undefined) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const head = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' });
  if (c.content) chunk({ content: c.content });
  for (const [index, call] of c.toolCalls.entries())
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: call.function }] });
  chunk({}, c.finishReason, includeUsage ? { usage: null } : {});
  if (includeUsage) res.write(`data: ${JSON.stringify({ ...head, choices: [], usage: c.usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

function route(rt: ModelServer) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const run = async () => {
      if ((path === '/v1/chat/completions' || path === '/chat/completions') && req.method === 'POST') {
        await handleChat(rt, req, res);
      } else if ((path === '/v1/models' || path === '/models') && req.method === 'GET') {
        sendJson(res, 200, {
          object: 'list',
          data: rt.models.map((m) => ({ id: m, object: 'model', created: 0, owned_by: 'abada-demo' })),
        });
      } else if (path === '/state' && req.method === 'GET') {
        sendJson(res, 200, { callCount: rt.calls.length, calls: rt.calls });
      } else {
        sendJson(res, 404, errorBody(`No route ${req.method} ${path}`, 'invalid_request_error', 'not_found'));
      }
    };
    run().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(String(err), 'server_error', null));
      else res.end();
    });
  };
}

export async function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const server = new ModelServer(opts);
  const host = opts.host ?? '127.0.0.1';
  server.port = await listen(server.http, opts.port ?? 0, host);
  server.baseUrl = `http://${host}:${server.port}`;
  server.url = `${server.baseUrl}/v1`;
  return server;
}

if (isMainModule(import.meta.url)) {
  const name = cliArg('script') ?? 'support-triage';
  const chosen = SCRIPTS[name];
  if (!chosen) {
    console.error(`unknown script ${name}; one of ${Object.keys(SCRIPTS).join(', ')}`);
    process.exit(2);
  }
  const server = await startModelServer({
    port: Number(cliArg('port') ?? process.env.PORT ?? 4200),
    host: cliArg('host'),
    script: chosen,
    latencyMs: Number(cliArg('latency-ms') ?? 0),
  });
  console.log(`scripted model server (${name}) on ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
