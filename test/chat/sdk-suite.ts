/**
 * What every provider's chat must do for OpenAI's SDK, whatever its wire: a tool round trip, a
 * streamed tool call the SDK's stream helper assembles, `runTools` streamed and not, structured
 * outputs through `chat.completions.parse`, JSON mode streamed. Each provider's test file runs it
 * against its fake (gatewayFetch validates every answer and chunk against OpenAI's schema).
 * `toolRequestCase` is the provider-mode check the hosted-job test files add for their fine-tuned
 * model and for `@slug/<model>`: what the provider received, read from its own wire format.
 */
import type OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod/v4';
import { streamedText } from './harness';

export interface SdkTarget {
  model: string;
  /** What the provider's model answers as (`Answer from <answeredBy>: …`). */
  answeredBy: string;
  client(): OpenAI;
}

export const WEATHER: OpenAI.Chat.Completions.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
};

const Weather = z.object({ city: z.string(), temperature: z.number(), sunny: z.boolean() });

/** Registers the suite's tests for `target()` (a function: targets are made in `beforeAll`). */
export function sdkSuite(target: () => SdkTarget): void {
  it('runs a tool round trip: the model calls the tool, the caller answers, the model answers in text', async () => {
    const { client, model, answeredBy } = target();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
    const first = await client().chat.completions.create({ model, messages, tools: [WEATHER], tool_choice: 'auto' });
    const [choice] = first.choices;
    expect(first.model).toBe(model);
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([{ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    const call = choice.message.tool_calls![0];
    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C' });
    const second = await client().chat.completions.create({ model, messages, tools: [WEATHER] });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: `Answer from ${answeredBy}: Sunny, 21 °C` } });
  });

  it('streams a tool call in OpenAI’s chunk shape, which the SDK’s stream helper assembles', async () => {
    const { client, model } = target();
    const stream = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Rome' }],
      tools: [WEATHER],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks } = await streamedText(stream);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.slice(1).every((d) => d.index === 0 && d.id === undefined && d.function?.name === undefined)).toBe(true);
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"city":"Rome"}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);

    const helper = client().chat.completions.stream({ model, messages: [{ role: 'user', content: 'Oslo' }], tools: [WEATHER] });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0].message.tool_calls?.[0].function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  });

  it.each([false, true])('runs the SDK’s runTools loop to a final answer (stream: %s)', async (stream) => {
    const { client, model, answeredBy } = target();
    const called: string[] = [];
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          parse: (args: string) => JSON.parse(args) as { city: string },
          function: ({ city }: { city: string }) => {
            called.push(city);
            return `Cloudy in ${city}`;
          },
        },
      },
    ];
    const messages = [{ role: 'user' as const, content: 'Lima' }];
    const runner = stream
      ? client().chat.completions.runTools({ model, messages, tools, stream: true })
      : client().chat.completions.runTools({ model, messages, tools });
    expect(await runner.finalContent()).toBe(`Answer from ${answeredBy}: Cloudy in Lima`);
    expect(called).toEqual(['Lima']);
  });

  it('answers structured outputs that chat.completions.parse parses with the zod schema, and JSON mode streamed', async () => {
    const { client, model } = target();
    const completion = await client().chat.completions.parse({
      model,
      messages: [{ role: 'user', content: 'Weather in Nice?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.parsed).toEqual({ city: expect.stringContaining('Weather in Nice?'), temperature: 1, sunny: true });

    const helper = client().chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'Weather in Bern?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect((await helper.finalChatCompletion()).choices[0].message.parsed).toMatchObject({ temperature: 1, sunny: true });

    const json = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Answer in JSON' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    const { text } = await streamedText(json);
    expect(JSON.parse(text)).toEqual(expect.any(Object));
  });
}

/** What a provider received for tools and structured outputs, read from its own wire format. */
export interface SentTools {
  /** Each tool sent, by name, with the property names of its parameters' schema. */
  tools: Record<string, string[]>;
  /** The tool the provider was told to call, if one was forced. */
  forced: string | undefined;
  /** The property names of the schema the provider was told to answer in (`response_format: json_schema`), however it carries it. */
  answerSchema: string[] | undefined;
}

export interface ToolTarget {
  model: string;
  client(): OpenAI;
  /** The provider's last chat request, as SentTools. */
  sent(): SentTools;
  /** The provider gets a json_schema as a forced tool named after it (Bedrock), not as a response schema. */
  schemaAsTool?: boolean;
}

/** The property names of a JSON Schema (or a provider's translation of one). */
export const propertiesOf = (schema: any): string[] => Object.keys(schema?.properties ?? {});

/** SentTools of a request in OpenAI's wire (OpenAI, Azure OpenAI, Fireworks AI, Together AI): the body as sent. */
export const openAIWireSent = (body: Record<string, any>): SentTools => ({
  tools: Object.fromEntries((body.tools ?? []).map((t: any) => [t.function.name, propertiesOf(t.function.parameters)])),
  forced: body.tool_choice?.function?.name,
  answerSchema: body.response_format?.type === 'json_schema' ? propertiesOf(body.response_format.json_schema.schema) : undefined,
});

/**
 * A model the gateway reaches in provider mode (a fine-tuned model of the workspace, or
 * `@slug/<model>`): `tools` with a named `tool_choice`, and a `json_schema` `response_format`, reach
 * the provider translated and come back as OpenAI's tool call and JSON content.
 */
export function toolRequestCase(label: string, target: () => ToolTarget): void {
  it(`carries tools, a named tool_choice and a json_schema response_format to the provider (${label})`, async () => {
    const { client, model, sent, schemaAsTool } = target();
    const called = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Paris' }],
      tools: [WEATHER],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(called.model).toBe(model);
    expect(called.choices[0].finish_reason).toBe('tool_calls');
    expect(called.choices[0].message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(sent()).toMatchObject({ tools: { get_weather: ['city'] }, forced: 'get_weather' });

    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, sunny: { type: 'boolean' } },
      required: ['city', 'sunny'],
      additionalProperties: false,
    };
    const structured = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Weather in Nice?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    expect(JSON.parse(structured.choices[0].message.content!)).toMatchObject({ sunny: true });
    if (schemaAsTool) expect(sent()).toMatchObject({ tools: { weather: ['city', 'sunny'] }, forced: 'weather' });
    else expect(sent().answerSchema).toEqual(['city', 'sunny']);
  });
}
