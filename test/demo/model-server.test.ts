import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, startModelServer } from '../../server/demo/model-server.js';
import {
  demoScript,
  refundScript,
  supportTriageScript,
  unavailableModels,
  userInput,
} from '../../server/demo/scripts.js';

const fn = (name: string): ChatCompletionTool => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: {} } },
});
const TOOLS = [fn('crm__get_customer'), fn('crm__create_ticket'), fn('crm__refund')];
const ALICE = {
  customerId: 'C-42',
  name: 'Alice Martin',
  email: 'alice@example.com',
  tier: 'gold',
  orders: [{ orderId: '5531', item: 'Espresso machine', status: 'lost_parcel', amount: 89, currency: 'EUR' }],
};

function startConversation(prompt: string): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: `You are a careful agent.\n${prompt}` },
    {
      role: 'user',
      content: '<input name="customerId">C-42</input>\n<input name="message">My parcel never arrived</input>',
    },
  ];
}

describe('scripted model server through the openai client', () => {
  let model: ModelServer;
  let openai: OpenAI;

  beforeAll(async () => {
    model = await startModelServer({ port: 0 });
    openai = new OpenAI({ baseURL: model.url, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(async () => {
    await model.close();
  });
  afterEach(() => {
    model.reset();
    model.setScript(supportTriageScript);
  });

  const ask = (messages: ChatCompletionMessageParam[], name = 'gemini-3.6-flash') =>
    openai.chat.completions.create({ model: name, messages, tools: TOOLS });

  it('plays seed 002 turn by turn: get_customer, create_ticket, final JSON', async () => {
    const messages = startConversation('Look the customer up, open a ticket and answer in JSON.');
    const first = await ask(messages);
    expect(first.object).toBe('chat.completion');
    expect(first.model).toBe('gemini-3.6-flash');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call1 = first.choices[0].message.tool_calls![0];
    expect(call1).toEqual({
      id: 'call_1',
      type: 'function',
      function: { name: 'crm__get_customer', arguments: '{"customerId":"C-42"}' },
    });
    expect(first.usage).toMatchObject({ completion_tokens: 20 });
    expect(first.usage!.total_tokens).toBe(first.usage!.prompt_tokens + 20);

    messages.push(first.choices[0].message, {
      role: 'tool',
      tool_call_id: 'call_1',
      content: JSON.stringify(ALICE),
    });
    const second = await ask(messages);
    const call2 = second.choices[0].message.tool_calls![0];
    expect(call2.id).toBe('call_2');
    expect(call2.type === 'function' && call2.function.name).toBe('crm__create_ticket');
    expect(call2.type === 'function' && JSON.parse(call2.function.arguments)).toEqual({
      customerId: 'C-42',
      subject: 'Parcel not received',
      priority: 'high',
    });

    messages.push(second.choices[0].message, {
      role: 'tool',
      tool_call_id: 'call_2',
      content: JSON.stringify({ ticketId: 'T-981', customerId: 'C-42', priority: 'high', status: 'open' }),
    });
    const third = await ask(messages);
    expect(third.choices[0].finish_reason).toBe('stop');
    expect(third.choices[0].message.tool_calls).toBeUndefined();
    expect(JSON.parse(third.choices[0].message.content!)).toEqual({
      ticketId: 'T-981',
      priority: 'high',
      summary: 'Order 5531 lost, gold customer',
      _confidence: 92,
    });
    expect(model.callCount).toBe(3);
    expect(model.calls.map((c) => c.model)).toEqual([
      'gemini-3.6-flash',
      'gemini-3.6-flash',
      'gemini-3.6-flash',
    ]);
    expect(model.calls[0].tools).toHaveLength(3);
  });

  it('answers the same conversation the same way (restart-safe)', async () => {
    const messages = startConversation('triage');
    const first = await ask(messages);
    messages.push(first.choices[0].message, {
      role: 'tool',
      tool_call_id: 'call_1',
      content: JSON.stringify(ALICE),
    });
    const a = await ask(messages);
    // A "new worker" replays the conversation from the journal against a restarted server.
    await model.close();
    model = await startModelServer({ port: model.port });
    // A pooled keep-alive socket to the old server may still look open: let the client retry on it.
    const replaying = new OpenAI({ baseURL: model.url, apiKey: 'test', maxRetries: 2 });
    const b = await replaying.chat.completions.create({
      model: 'gemini-3.6-flash',
      messages: structuredClone(messages),
      tools: TOOLS,
    });
    expect(b.id).toBe(a.id);
    expect(b.choices).toEqual(a.choices);
    expect(b.usage).toEqual(a.usage);
  });

  it('seed 000: refund proposed, then a rejection answered without refund', async () => {
    model.setScript(refundScript);
    const messages = startConversation('Decide whether to refund.');
    const first = await ask(messages);
    messages.push(first.choices[0].message, {
      role: 'tool',
      tool_call_id: 'call_1',
      content: JSON.stringify(ALICE),
    });
    const second = await ask(messages);
    const refund = second.choices[0].message.tool_calls![0];
    expect(refund.type === 'function' && refund.function).toEqual({
      name: 'crm__refund',
      arguments: '{"orderId":"5531","amount":89,"currency":"EUR"}',
    });
    const rejected = [
      ...messages,
      second.choices[0].message,
      {
        role: 'tool' as const,
        tool_call_id: refund.id,
        content:
          'Rejected: a person did not approve this call. Reason: Already refunded with a gift card on 12 October.',
      },
    ];
    const no = await ask(rejected);
    expect(JSON.parse(no.choices[0].message.content!)).toEqual({
      refunded: false,
      reason: 'Already refunded with a gift card on 12 October.',
      _confidence: 90,
    });
    const approved = [
      ...messages,
      second.choices[0].message,
      {
        role: 'tool' as const,
        tool_call_id: refund.id,
        content: '{"refundId":"R-1001","orderId":"5531","amount":89,"currency":"EUR","status":"refunded"}',
      },
    ];
    const yes = await ask(approved);
    expect(JSON.parse(yes.choices[0].message.content!)).toEqual({
      refunded: true,
      refundId: 'R-1001',
      _confidence: 95,
    });
    // Approved with a comment: the worker appends the note to the CRM's answer; still a refund.
    const noted = structuredClone(approved);
    noted[noted.length - 1].content += '\n\nNote from the approver: ok';
    const withNote = await ask(noted);
    expect(JSON.parse(withNote.choices[0].message.content!)).toEqual({
      refunded: true,
      refundId: 'R-1001',
      _confidence: 95,
    });
  });

  it('an unavailable model answers 503, surfacing as an APIError', async () => {
    model.setScript(unavailableModels(['gemini-3.6-flash'], supportTriageScript));
    const messages = startConversation('triage');
    const err = await ask(messages).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('unavailable');
    const fallback = await ask(messages, 'gpt-4.1-mini');
    expect(fallback.choices[0].message.tool_calls![0].id).toBe('call_1');
    expect(model.callCount).toBe(2);
  });

  it('custom status answers, streaming, /models and /state', async () => {
    model.setScript(() => ({ status: 429, body: { error: { message: 'slow down', type: 'rate_limit' } } }));
    const limited = await ask(startConversation('x')).catch((e: unknown) => e);
    expect((limited as InstanceType<typeof OpenAI.APIError>).status).toBe(429);

    model.setScript(supportTriageScript);
    const stream = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: startConversation('triage'),
      tools: TOOLS,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const toolDelta = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDelta[0]).toMatchObject({ id: 'call_1', function: { name: 'crm__get_customer' } });
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(20);

    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toContain('gemini-3.6-flash');
    const state = (await (await fetch(`${model.baseUrl}/state`)).json()) as {
      callCount: number;
      calls: unknown[];
    };
    expect(state.callCount).toBe(2);
    expect(state.calls).toHaveLength(2);
  });

  it('demoScript routes refund conversations to the refund script', () => {
    const req = (prompt: string) => ({
      model: 'm',
      messages: startConversation(prompt) as Parameters<typeof demoScript>[0]['messages'],
      tools: [],
    });
    const refund = demoScript({
      ...req('Refund the lost parcel.'),
      messages: [
        ...req('Refund the lost parcel.').messages,
        {
          role: 'assistant',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'crm__get_customer', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify(ALICE) },
      ],
    });
    expect('toolCalls' in refund && refund.toolCalls[0].name).toBe('crm__refund');
    expect(userInput(req('x').messages, 'message')).toBe('My parcel never arrived');
  });
});
