/**
 * The console's pure logic (no browser needed): the loss points a chart draws, the version diff, the
 * `{{>partial}}` preview, the dataset line errors the files page lists, the usage page's sums and the playground's request.
 */
import { lineErrors } from '../../console/src/dataset-errors';
import { diffLines } from '../../console/src/diff';
import { lossPoints } from '../../console/src/loss';
import { expandPartials, partialSlugs } from '../../console/src/partial-refs';
import { NO_FORMAT, answerToolCalls, chatBody, prettyJson, withToolCallDeltas } from '../../console/src/chat-request';
import { costGroupOf, dayRangeStart, formatCost, usageView } from '../../console/src/usage';

describe('lossPoints', () => {
  it('takes checkpoints and metrics events, one point per step in step order, checkpoints winning', () => {
    const points = lossPoints(
      [
        { stepNumber: 30, metrics: { step: 30, train_loss: 0.4 } },
        { stepNumber: 10, metrics: { step: 10, train_loss: 0.9 } },
        { stepNumber: 40, metrics: { train_mean_token_accuracy: 0.9 } },
      ],
      [
        { type: 'metrics', data: { step: 20, train_loss: 0.65 } },
        { type: 'metrics', data: { step: 10, loss: 1.5 } },
        { type: 'message', data: { step: 25, train_loss: 0.1 } },
        { type: 'metrics', data: null },
      ],
    );
    expect(points).toEqual([
      { step: 10, loss: 0.9 },
      { step: 20, loss: 0.65 },
      { step: 30, loss: 0.4 },
    ]);
  });
});

describe('diffLines', () => {
  it('marks removed and added lines around the common ones', () => {
    expect(diffLines('Hello.\nBe polite.\nBye.', 'Hello.\nBe very polite.\nBye.\nPS')).toEqual([
      { kind: 'same', text: 'Hello.' },
      { kind: 'removed', text: 'Be polite.' },
      { kind: 'added', text: 'Be very polite.' },
      { kind: 'same', text: 'Bye.' },
      { kind: 'added', text: 'PS' },
    ]);
  });

  it('finds nothing to change between equal texts', () => {
    expect(diffLines('a\nb', 'a\nb').every((line) => line.kind === 'same')).toBe(true);
  });
});

describe('partial references', () => {
  it('lists each referenced slug once and expands the known ones', () => {
    const text = '{{>tone}} Hi {{> tone }} and {{>missing}} but {{not-a-ref}}';
    expect(partialSlugs(text)).toEqual(['tone', 'missing']);
    expect(expandPartials(text, new Map([['tone', 'Be brief.']]))).toBe('Be brief. Hi Be brief. and {{>missing}} but {{not-a-ref}}');
  });
});

describe('lineErrors', () => {
  it('splits the API message into one entry per bad line', () => {
    const message = 'Invalid fine-tune dataset: line 1: not valid JSON; line 12: no assistant message (and 2 more lines with errors)';
    expect(lineErrors(message)).toEqual(['line 1: not valid JSON', 'line 12: no assistant message (and 2 more lines with errors)']);
  });

  it('finds none in another error', () => {
    expect(lineErrors('Invalid fine-tune dataset: the file has 3 examples; at least 10 are required')).toEqual([]);
  });
});

describe('usageView', () => {
  const usage = (model: string | null, input: number, output: number, requests = 1, cached = 0) => ({
    input_tokens: input,
    input_cached_tokens: cached,
    output_tokens: output,
    num_model_requests: requests,
    model,
    api_key_id: null,
    project_id: null,
  });
  const cost = (lineItem: string, value?: number) => ({
    ...(value === undefined ? {} : { amount: { value, currency: 'eur' } }),
    line_item: lineItem,
    project_id: null,
    api_key_id: null,
  });

  it('sums each group over the buckets, most tokens first, with a series per group and bucket', () => {
    const view = usageView(
      'model',
      [
        { start_time: 0, end_time: 86_400, results: [usage('small', 10, 5, 2, 4), usage('big', 100, 50)] },
        { start_time: 86_400, end_time: 172_800, results: [usage('small', 1, 1)] },
      ],
      [
        { start_time: 0, end_time: 86_400, results: [cost('small, input', 0.5), cost('small, output', 0.25), cost('big, input')] },
        { start_time: 86_400, end_time: 172_800, results: [cost('small, input', 0.125)] },
      ],
    );
    expect(view.times).toEqual([0, 86_400]);
    expect(view.currency).toBe('eur');
    expect(view.groups).toEqual([
      { key: 'big', inputTokens: 100, cachedTokens: 0, outputTokens: 50, requests: 1, cost: null, costUnknown: true },
      { key: 'small', inputTokens: 11, cachedTokens: 4, outputTokens: 6, requests: 3, cost: 0.875, costUnknown: false },
    ]);
    expect(view.series).toEqual([
      { key: 'big', tokens: [150, 0], requests: [1, 0], cost: [0, 0] },
      { key: 'small', tokens: [15, 2], requests: [2, 1], cost: [0.75, 0.125] },
    ]);
  });

  it('reads the model of a cost from its line item, and other groupings from their field', () => {
    expect(costGroupOf('model', cost('ft:gpt-4o-mini:org, x:abc, cached input'))).toBe('ft:gpt-4o-mini:org, x:abc');
    expect(costGroupOf('model', { ...cost('x'), line_item: null })).toBeNull();
    expect(costGroupOf('api_key_id', { ...cost('m, input'), api_key_id: 'key-1' })).toBe('key-1');
  });

  it('never shows an unknown price as 0', () => {
    expect(formatCost({ cost: null, costUnknown: true }, 'usd')).toBe('unknown');
    expect(formatCost({ cost: 0.5, costUnknown: true }, 'usd')).toBe('$0.50 + unknown');
    expect(formatCost({ cost: 0.000082, costUnknown: false }, 'usd')).toBe('$0.000082');
    expect(formatCost({ cost: null, costUnknown: false }, 'usd')).toBe('—');
  });

  it('starts a range of whole UTC days that ends with today', () => {
    const now = Date.UTC(2026, 10, 27, 15, 30);
    expect(dayRangeStart(now, 1)).toBe(Date.UTC(2026, 10, 27) / 1000);
    expect(dayRangeStart(now, 7)).toBe(Date.UTC(2026, 10, 21) / 1000);
  });
});

describe('the playground request', () => {
  const tool = { name: 'get_weather', description: ' Weather ', parameters: '{"type": "object", "properties": {"city": {"type": "string"}}}' };

  it('sends tool calls, tool results, function tools, a named tool choice and a JSON schema in OpenAI’s shape', () => {
    const messages = answerToolCalls([{ role: 'user', content: 'Paris?' }], '', [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    messages[2].content = 'Sunny';
    const body = chatBody('m', messages, [tool], 'function:get_weather', { type: 'json_schema', name: 'w', schema: '{"type": "object"}', strict: true });
    expect(body).toEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
    });
    expect(chatBody('m', [], [], 'auto', { ...NO_FORMAT, type: 'json_object' })).toEqual({
      model: 'm',
      messages: [],
      response_format: { type: 'json_object' },
    });
    expect(chatBody('m', [], [tool], 'required', NO_FORMAT)).toMatchObject({ tool_choice: 'required' });
  });

  it('says what to fix in typed JSON and tool names', () => {
    expect(() => chatBody('m', [], [{ ...tool, parameters: '{' }], 'auto', NO_FORMAT)).toThrow(/^The parameters of tool get_weather is not JSON/);
    expect(() => chatBody('m', [], [{ ...tool, parameters: '[]' }], 'auto', NO_FORMAT)).toThrow('The parameters of tool get_weather must be a JSON object');
    expect(() => chatBody('m', [], [{ ...tool, name: 'no spaces' }], 'auto', NO_FORMAT)).toThrow(/^Tool 1 needs a name/);
    expect(() => chatBody('m', [], [tool, tool], 'auto', NO_FORMAT)).toThrow('Two tools are named get_weather');
    expect(() => chatBody('m', [], [tool], 'function:other', NO_FORMAT)).toThrow('The tool choice names other, which is not a tool');
    expect(() => chatBody('m', [], [], 'auto', { ...NO_FORMAT, type: 'json_schema', schema: 'x' })).toThrow(/^The response schema is not JSON/);
  });

  it('puts streamed tool-call pieces back together by index', () => {
    let calls = withToolCallDeltas([], [{ index: 0, id: 'call_a', function: { name: 'f', arguments: '' } }]);
    calls = withToolCallDeltas(calls, [
      { index: 0, function: { arguments: '{"x":' } },
      { index: 1, id: 'call_b', function: { name: 'g', arguments: '{}' } },
    ]);
    calls = withToolCallDeltas(calls, [{ index: 0, function: { arguments: '1}' } }]);
    expect(calls).toEqual([
      { id: 'call_a', name: 'f', arguments: '{"x":1}' },
      { id: 'call_b', name: 'g', arguments: '{}' },
    ]);
  });

  it('pretty-prints JSON answers only', () => {
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson('Answer: {"a":1}')).toBeNull();
  });
});
