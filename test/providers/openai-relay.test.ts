/**
 * The relay of OpenAI-format streams (src/providers/openai-compatible/relay.ts) on the wire variants
 * the four providers send: compact JSON (OpenAI, Azure) and JSON with blanks after colons (Python
 * servers), `"usage":null` on every chunk, Azure's choice-less opening chunk, the usage inside the
 * last choice chunk and `eos` as a finish reason (Together AI, Fireworks AI), CRLF line ends, events
 * and characters split between reads, an error event after text.
 */
import { GatewayError } from '../../src/errors';
import { WireRelay } from '../../src/providers/openai-compatible/relay';

const endpoint = { title: 'Test AI', baseUrl: 'http://127.0.0.1:1', headers: {}, secrets: ['sk-secret-123'], http: {} };

const relayOf = (includeUsage = false) => new WireRelay(endpoint, 'ft:my-model', includeUsage);
const events = (...data: string[]) => Buffer.from(data.map((d) => `data: ${d}\n\n`).join(''));
const parsed = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice('data: '.length)) as Record<string, any>;
    });

const chunk = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'provider-model', ...fields });
const delta = (content: string, extra: Record<string, unknown> = {}) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra });

it('passes each event on with the caller’s model, its other fields as the provider wrote them', () => {
  const relay = relayOf();
  const first = delta('Hel', { system_fingerprint: 'fp_1' });
  const out = relay.read(events(first, delta('lo')));
  expect(relay.head).toEqual({ id: 'chatcmpl-1', created: 7 });
  expect(out).toBe(`data: ${first.replace('"provider-model"', '"ft:my-model"')}\n\n` + `data: ${delta('lo').replace('"provider-model"', '"ft:my-model"')}\n\n`);
});

it('takes the stream’s id and time from its first chunk, also when they need unescaping or follow the choices', () => {
  const escaped = relayOf();
  escaped.read(events(chunk({ id: 'chatcmpl-\\u0041"b', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] })));
  expect(escaped.head).toEqual({ id: 'chatcmpl-\\u0041"b', created: 7 });
  const late = relayOf();
  const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } };
  late.read(events(JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }], id: 'chatcmpl-9', created: 8, model: 'm' })));
  expect(late.head).toEqual({ id: 'chatcmpl-9', created: 8 });
});

it('finds the fields in JSON written with blanks, and leaves a quoted "model" in the text alone', () => {
  const relay = relayOf();
  relay.read(events(delta('a')));
  const spaced =
    '{"id": "chatcmpl-1", "model" : "provider-model", "choices": [{"index": 0, "delta": {"content": "say \\"model\\": \\"x\\""}, "finish_reason": null}], "usage": null}';
  const [event] = parsed(relay.read(events(spaced)));
  expect(event).toEqual({ id: 'chatcmpl-1', model: 'ft:my-model', choices: [{ index: 0, delta: { content: 'say "model": "x"' }, finish_reason: null }] });
});

it('keeps "usage":null on each chunk when the caller asked for usage, as OpenAI sends it, and drops it otherwise', () => {
  const withNull = delta('a', { usage: null });
  expect(parsed(relayOf(true).read(events(withNull)))[0]).toHaveProperty('usage', null);
  expect(parsed(relayOf(false).read(events(withNull)))[0]).not.toHaveProperty('usage');
});

it('drops Azure’s choice-less opening chunk and takes the id from the first chunk with choices', () => {
  const relay = relayOf();
  const opening = JSON.stringify({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
  const out = parsed(relay.read(events(opening, delta('Hi'))));
  expect(out.map((c) => c.choices[0].delta.content)).toEqual(['Hi']);
  expect(relay.head?.id).toBe('chatcmpl-1');
  // Later choice-less chunks carry nothing for the caller either.
  expect(relay.read(events(opening))).toBe('');
});

it('takes the usage out of the last choice chunk and says `stop` for `eos` (Together AI, Fireworks AI)', () => {
  const relay = relayOf(true);
  relay.read(events(delta('a')));
  const last = chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'eos' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  const [event] = parsed(relay.read(events(last, '[DONE]')));
  expect(event.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  expect(event).not.toHaveProperty('usage');
  expect(event.model).toBe('ft:my-model');
  expect(relay.usage).toEqual({ promptTokens: 3, completionTokens: 2, totalTokens: 5 });
  expect(relay.finishReason).toBe('stop');
});

it('keeps the usage of OpenAI’s final choice-less chunk, which the caller gets from the gateway', () => {
  const relay = relayOf(true);
  relay.read(events(delta('a')));
  const usage = chunk({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5, prompt_tokens_details: { cached_tokens: 2 } } });
  expect(relay.read(events(usage, '[DONE]'))).toBe('');
  expect(relay.usage).toEqual({ promptTokens: 4, completionTokens: 1, totalTokens: 5, promptTokensDetails: { cached_tokens: 2 } });
});

it('reads events split between reads, CRLF line ends, characters split mid-byte, comments; nothing after [DONE]', () => {
  const relay = relayOf();
  const bytes = Buffer.from(`: keep-alive\r\n\r\ndata: ${delta('héllo')}\r\n\r\ndata: [DONE]\r\n\r\ndata: ${delta('late')}\r\n\r\n`);
  const cut = bytes.indexOf(Buffer.from('é')) + 1;
  let out = '';
  for (const [from, to] of [
    [0, 5],
    [5, cut],
    [cut, bytes.length - 3],
    [bytes.length - 3, bytes.length],
  ])
    out += relay.read(bytes.subarray(from, to));
  out += relay.end();
  expect(parsed(out).map((c) => c.choices[0].delta.content)).toEqual(['héllo']);
});

it('delivers the events before an error event of the same read, then fails with the provider’s message, scrubbed', () => {
  const relay = relayOf();
  const out = relay.read(events(delta('Answer '), delta('from'), JSON.stringify({ error: { message: 'crashed with key sk-secret-123' } })));
  expect(parsed(out).map((c) => c.choices[0].delta.content)).toEqual(['Answer ', 'from']);
  let failure: unknown;
  try {
    relay.rethrow();
  } catch (err) {
    failure = err;
  }
  expect(failure).toBeInstanceOf(GatewayError);
  expect(failure).toMatchObject({ status: 502, message: expect.stringContaining('Test AI failed while streaming: crashed with key') });
  expect((failure as Error).message).not.toContain('sk-secret-123');
});

it('fails at once on an error event before any text, and on an event that is not JSON', () => {
  expect(() => relayOf().read(events(JSON.stringify({ error: 'overloaded' })))).toThrow('Test AI failed while streaming: overloaded');
  const relay = relayOf();
  relay.read(events(delta('a')));
  expect(() => relay.read(events('{"model":"x",'))).toThrow('Test AI sent a stream chunk that is not JSON');
});
