/**
 * The chat contract: what every provider's chat must do through the gateway's route for OpenAI's
 * SDK, whatever its wire, in client mode (the provider named in `x-gateway-provider` or `@slug`)
 * and in hosted mode (a tuned model of the workspace). A provider's chat file calls `chatContract`
 * with a table of the cases it runs and, for each, only what is its own: what its fake received,
 * its error words, what it cannot carry. The cases: a completion and a stream with usage, both in
 * the usage ledger, and a plain stream ending in [DONE]; the SDK suite (tools, streamed tool-call
 * deltas, runTools, structured outputs); images; fields refused naming field and provider before
 * any call; the provider's 429 relayed; a stream failing midway raised by the SDK; a client
 * dropping the stream ending the upstream call.
 */
import OpenAI from 'openai';
import { sseData, streamedText } from '../chat/harness';
import { sdkSuite } from '../chat/sdk-suite';
import { expectLedgered } from '../usage/harness';
import { gatewayFetch, gatewaySdk } from './answers';
import { eventually, expectError, type ExpectedError } from './expect';
import { api, type TestGateway } from './gateway';

type Json = Record<string, any>;
type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;
/** What the provider received, to match (a function where it names what `beforeAll` made). */
type Pattern = Json | (() => Json);
const resolve = (pattern: Pattern) => (typeof pattern === 'function' ? pattern() : pattern);

/** Where the calls go: made in the provider file's `beforeAll`, read by each test. */
export interface ChatTarget {
  gw: Pick<TestGateway, 'url' | 'key' | 'gateway'>;
  model: string;
  /** What the fake answers as (`Answer from <answeredBy>: …`); the model unless said. */
  answeredBy?: string;
  /** Headers of every call: `x-gateway-provider` and the provider's settings. */
  headers?: Record<string, string>;
  /** The provider's key, sent as the bearer token (client mode with settings in headers). */
  apiKey?: string;
}

export interface ChatCases {
  /** The provider as the usage ledger names it, and as its errors name it. */
  provider: string;
  title: string;
  target(): ChatTarget;
  /** The provider's last chat request as its fake recorded it, and how many it has recorded. */
  received(): Json;
  calls(): number;
  /** A completion (ANSWER_REQUEST) and a stream with usage: what the provider received for each. */
  answers?: { sent: Pattern; streamed: Pattern };
  /** The SDK suite: tool round trip, streamed tool-call deltas, runTools, structured outputs, JSON mode. */
  sdk?: true;
  /** `n: 2`: two choices, streamed and not. */
  several?: true;
  /** Log probabilities with two top ones per token; what the provider received. */
  logprobs?: { sent: Pattern };
  /** A data: image (and an image URL where the provider fetches one): the provider's checks of what it received. */
  images?: { urls?: boolean; sent(png: string, content: Part[]): void };
  /** What the provider cannot carry: the body, the field named, and what else the error says (its code, its message). */
  refused?: Array<[body: Json, param: string, error?: ExpectedError]>;
  /** Makes the provider answer 429 (every retry too): relayed as 429 provider_error with `error`, never holding `secret`. */
  throttled?: { inject(): void; error?: ExpectedError; secret?: string };
  /** Makes the provider's next stream fail midway: the text received before, and the error the SDK raises. */
  failsMidway?: { inject(): void; before: string; error: Json };
  /** Slows the provider's streams, and counts the streams it saw abandoned. */
  dropped?: { delay(ms: number): void; abandoned(): number };
}

/** The completion the `answers` case asks for (a provider on OpenAI's wire receives it as it is). */
export const ANSWER_REQUEST: Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, 'model'> = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello' },
  ],
  max_tokens: 50,
  temperature: 0.2,
  top_p: 0.9,
  stop: ['END'],
};

/** The OpenAI SDK on the gateway as the target calls it. */
export const chatClient = (t: ChatTarget) => gatewaySdk(t.gw, { apiKey: t.apiKey, headers: t.headers });

const rawHeaders = (t: ChatTarget) => ({ ...t.headers, ...(t.apiKey && { authorization: `Bearer ${t.apiKey}` }) });

/** A raw chat call of the target: the body overrides a one-message request. */
export const askChat = (t: ChatTarget, body: Json = {}) =>
  api(t.gw, 'POST', '/v1/chat/completions', { headers: rawHeaders(t), body: { model: t.model, messages: [{ role: 'user', content: 'Hi' }], ...body } });

const fetchChat = (t: ChatTarget, body: Json, signal?: AbortSignal) =>
  gatewayFetch(`${t.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': t.gw.key, ...rawHeaders(t) },
    body: JSON.stringify({ model: t.model, ...body }),
    signal,
  });

export function chatContract(name: string, cases: ChatCases): void {
  const { target, title } = cases;
  const reply = (text: string) => `Answer from ${target().answeredBy ?? target().model}: ${text}`;

  describe(`${name}: the chat contract`, () => {
    const { answers, logprobs, images, refused, throttled, failsMidway, dropped } = cases;
    if (answers)
      it('answers a completion and a stream with usage, both in the usage ledger, and a plain stream ends with [DONE]', async () => {
        const t = target();
        const completion = await chatClient(t).chat.completions.create({ model: t.model, ...ANSWER_REQUEST });
        expect(completion).toMatchObject({
          object: 'chat.completion',
          model: t.model,
          choices: [{ index: 0, message: { role: 'assistant', content: reply('Hello') }, finish_reason: 'stop' }],
        });
        expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
        expect(cases.received()).toMatchObject(resolve(answers.sent));

        const stream = await chatClient(t).chat.completions.create({
          model: t.model,
          messages: [{ role: 'user', content: 'Stream me three words' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const { text, chunks } = await streamedText(stream);
        expect(text).toBe(reply('Stream me three words'));
        expect(chunks.length).toBeGreaterThan(4);
        expect(chunks[0].choices[0].delta.role).toBe('assistant');
        expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === t.model && c.id === chunks[0].id)).toBe(true);
        expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
        expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
        expect(cases.received()).toMatchObject(resolve(answers.streamed));
        await expectLedgered(t.gw, cases.provider, [
          { streamed: false, usage: completion.usage },
          { streamed: true, usage: chunks.at(-1)?.usage },
        ]);

        const res = await fetchChat(t, { messages: [{ role: 'user', content: 'Done?' }], stream: true });
        expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const events = await sseData(res);
        expect(events.at(-1)).toBe('[DONE]');
        const plain = events.slice(0, -1).map((e) => JSON.parse(e));
        expect(plain[0]).toMatchObject({ object: 'chat.completion.chunk', model: t.model, choices: [{ delta: { role: 'assistant' } }] });
        expect(plain.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
      });

    if (cases.sdk)
      describe('the SDK', () =>
        sdkSuite(() => ({ model: target().model, answeredBy: target().answeredBy ?? target().model, client: () => chatClient(target()) })));

    if (cases.several)
      it('answers several choices, streamed and not', async () => {
        const { model } = target();
        const two = await chatClient(target()).chat.completions.create({ model, messages: [{ role: 'user', content: 'Twice' }], n: 2 });
        expect(two.choices.map((c) => [c.index, c.message.content])).toEqual([0, 1].map((i) => [i, reply('Twice')]));
        const streamed = await chatClient(target()).chat.completions.create({ model, messages: [{ role: 'user', content: 'Twice' }], n: 2, stream: true });
        const { chunks } = await streamedText(streamed);
        const choices = chunks.flatMap((c) => c.choices);
        const textOf = (index: number) => choices.flatMap((c) => (c.index === index ? [c.delta.content ?? ''] : [])).join('');
        expect([textOf(0), textOf(1)]).toEqual([reply('Twice'), reply('Twice')]);
        expect(choices.filter((c) => c.finish_reason).map((c) => c.index)).toEqual([0, 1]);
      });

    if (logprobs)
      it('answers log probabilities, with the top ones asked for', async () => {
        const messages = [{ role: 'user' as const, content: 'Two words' }];
        const completion = await chatClient(target()).chat.completions.create({ model: target().model, messages, logprobs: true, top_logprobs: 2 });
        const tokens = completion.choices[0].logprobs?.content ?? [];
        expect(tokens.map((t) => t.token).join('')).toBe(completion.choices[0].message.content);
        expect(tokens[0].top_logprobs).toHaveLength(2);
        expect(cases.received()).toMatchObject(resolve(logprobs.sent));
      });

    if (images)
      it(`takes an image as a data: URL${images.urls ? ' and as a URL the provider fetches itself' : ''}`, async () => {
        const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
        const content: Part[] = [
          { type: 'text', text: 'What is this? ' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, ...(images.urls && { detail: 'low' as const }) } },
          ...(images.urls ? [{ type: 'image_url' as const, image_url: { url: 'https://example.com/cat.jpg' } }] : []),
        ];
        const completion = await chatClient(target()).chat.completions.create({ model: target().model, messages: [{ role: 'user', content }] });
        const url = images.urls ? '[image https://example.com/cat.jpg]' : '';
        expect(completion.choices[0].message.content).toBe(reply(`What is this? [image image/png 16 bytes]${url}`));
        images.sent(png, content);
      });

    if (refused)
      // Every row has its three members: jest takes a missing one for the `done` callback.
      it.each(refused.map(([body, param, error = {}]) => [body, param, error] as const))(
        `refuses %j naming the field and ${title}, before any call`,
        async (body, param, error) => {
          const before = cases.calls();
          const res = await askChat(target(), body);
          expectError(res, 400, { type: 'invalid_request_error', code: 'unsupported_parameter', param, ...error });
          expect(res.body.error.message).toContain(title);
          expect(cases.calls()).toBe(before);
        },
      );

    if (throttled)
      it(`relays ${title}'s 429 as 429 provider_error`, async () => {
        throttled.inject();
        const res = await askChat(target());
        expectError(res, 429, { type: 'provider_error', ...throttled.error });
        if (throttled.secret) expect(JSON.stringify(res.body)).not.toContain(throttled.secret);
      });

    if (failsMidway)
      it('ends a stream that fails midway with an error event in the error shape, which the SDK raises', async () => {
        failsMidway.inject();
        const stream = await chatClient(target()).chat.completions.create({
          model: target().model,
          messages: [{ role: 'user', content: 'one two three four' }],
          stream: true,
        });
        const received: string[] = [];
        const failure = await (async () => {
          for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
        })().catch((err: unknown) => err);
        expect(received.join('')).toBe(failsMidway.before);
        expect(failure).toBeInstanceOf(OpenAI.APIError);
        expect((failure as InstanceType<typeof OpenAI.APIError>).error).toEqual(failsMidway.error);
      });

    if (dropped)
      it('stops the upstream call when the client drops the stream', async () => {
        dropped.delay(100);
        try {
          const abandoned = dropped.abandoned();
          const cancel = new AbortController();
          const res = await fetchChat(target(), { messages: [{ role: 'user', content: 'a long answer with many words in it' }], stream: true }, cancel.signal);
          const first = await res.body!.getReader().read();
          expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
          cancel.abort();
          await eventually(async () => (dropped.abandoned() > abandoned ? true : undefined), 5_000);
        } finally {
          dropped.delay(0);
        }
      });
  });
}
