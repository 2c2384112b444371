import { GatewayError } from '../../src/errors';
import { assertValidDataset, createDatasetValidator, type DatasetReport, type DatasetValidatorOptions } from '../../src/modules/files/dataset-validator';

const chatExample = (n = 0) => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: `Question ${n}?` },
    { role: 'assistant', content: `Answer ${n}.` },
  ],
});

const preferenceExample = (n = 0) => ({
  input: { messages: [{ role: 'user', content: `Pick ${n}` }] },
  preferred_output: [{ role: 'assistant', content: 'good' }],
  non_preferred_output: [{ role: 'assistant', content: 'bad' }],
});

const jsonl = (lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';

const tenExamples = () => Array.from({ length: 10 }, (_, i) => chatExample(i));

/** Runs the validator over `data`, fed in the given chunk sizes (the rest in one go). */
function validate(data: Buffer | string, chunkSizes: number[] = [], opts?: DatasetValidatorOptions): DatasetReport {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const validator = createDatasetValidator(opts);
  let offset = 0;
  for (const size of chunkSizes) {
    validator.write(bytes.subarray(offset, offset + size));
    offset += size;
  }
  if (offset < bytes.length) validator.write(bytes.subarray(offset));
  return validator.finish();
}

/** Feeds one byte at a time: every possible split point at once. */
const validateBytewise = (data: string) =>
  validate(
    data,
    Array.from({ length: Buffer.byteLength(data) }, () => 1),
  );

function assertionError(report: DatasetReport): GatewayError {
  try {
    assertValidDataset(report);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected the dataset to be refused');
}

describe('dataset validator', () => {
  it('accepts a valid 10-example chat dataset', () => {
    const report = validate(jsonl(tenExamples()));

    expect(report).toMatchObject({ examples: 10, errors: [], errorCount: 0 });
    expect(() => assertValidDataset(report)).not.toThrow();
  });

  it('accepts the preference (DPO) format', () => {
    const report = validate(jsonl(Array.from({ length: 10 }, (_, i) => preferenceExample(i))));

    expect(report).toMatchObject({ examples: 10, errors: [] });
  });

  it('accepts content parts, tool-calling assistant turns without content, CRLF and a missing final newline', () => {
    const toolTurn = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w' } }] },
        { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
        { role: 'assistant', content: 'Sunny.', weight: 1 },
      ],
    };
    const data = Array.from({ length: 10 }, () => JSON.stringify(toolTurn)).join('\r\n');

    expect(validate(data)).toMatchObject({ examples: 10, errors: [] });
  });

  it('handles a line split across chunks', () => {
    const data = jsonl(tenExamples());
    const firstNewline = data.indexOf('\n');

    expect(validate(data, [firstNewline - 7, 3, 5, 40])).toMatchObject({ examples: 10, errors: [] });
    expect(validateBytewise(data)).toMatchObject({ examples: 10, errors: [] });
  });

  it('handles multi-byte UTF-8 characters split across chunks', () => {
    const examples = tenExamples();
    examples[0].messages[1].content = 'naïve café — 日本語 🎉';
    const data = jsonl(examples);
    const emoji = Buffer.from(data).indexOf(Buffer.from('🎉'));

    // Cut inside the 4-byte emoji, then everywhere.
    expect(validate(data, [emoji + 1, 2])).toMatchObject({ examples: 10, errors: [] });
    expect(validateBytewise(data)).toMatchObject({ examples: 10, errors: [] });
  });

  it('reports a bad JSON line by its 1-based number, counting blank lines', () => {
    const lines: unknown[] = tenExamples();
    lines.splice(1, 0, ''); // line 2 is blank
    lines.splice(3, 0, '{"messages": [');
    const report = validate(jsonl(lines));

    expect(report.errors).toEqual([{ line: 4, reason: 'invalid JSON' }]);
    expect(report.examples).toBe(10);
  });

  it('reports a missing assistant message', () => {
    const lines: unknown[] = tenExamples();
    lines[2] = { messages: [{ role: 'user', content: 'hi' }] };

    expect(validate(jsonl(lines)).errors).toEqual([{ line: 3, reason: 'no assistant message' }]);
  });

  const preference = (input: string, preferred: string, nonPreferred: string) =>
    `{"input": {"messages": ${input}}, "preferred_output": ${preferred}, "non_preferred_output": ${nonPreferred}}`;
  const user = '[{"role": "user", "content": "x"}]';
  const assistant = '[{"role": "assistant", "content": "y"}]';

  it.each([
    ['[1, 2]', 'expected a JSON object'],
    ['"text"', 'expected a JSON object'],
    ['{"prompt": "a", "completion": "b"}', 'missing "messages" array'],
    ['{"messages": {}}', 'missing "messages" array'],
    ['{"messages": []}', '"messages" is empty'],
    ['{"messages": ["hi"]}', 'message 1 is not an object'],
    ['{"messages": [{"content": "x"}]}', 'message 1 is missing "role"'],
    ['{"messages": [{"role": "user", "content": "x"}, {"role": "bot", "content": "y"}]}', 'message 2 has invalid role "bot"'],
    ['{"messages": [{"role": "function", "content": "x"}]}', 'message 1 has invalid role "function"'],
    ['{"messages": [{"role": "assistant"}]}', 'message 1 is missing "content"'],
    ['{"messages": [{"role": "user", "content": null}]}', 'message 1 has invalid "content"'],
    ['{"messages": [{"role": "assistant", "content": 42}]}', 'message 1 has invalid "content"'],
    ['{"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}', 'message 1 has invalid content part 1'],
    ['{"messages": [{"role": "assistant", "content": "x", "weight": 2}]}', 'message 1 has invalid "weight" (must be 0 or 1)'],
    ['{"input": {}, "preferred_output": [], "non_preferred_output": []}', 'missing "input.messages" array'],
    [preference('[{"role": "bot", "content": "x"}]', assistant, assistant), 'input message 1 has invalid role "bot"'],
    [preference(user, '[]', assistant), '"preferred_output" is empty'],
    [preference(user, assistant, user), 'no assistant message in "non_preferred_output"'],
    [`{"input": {"messages": ${user}}, "non_preferred_output": ${assistant}}`, 'missing "preferred_output" array'],
  ])('explains %s as %j', (line, reason) => {
    expect(validate(line + '\n').errors).toEqual([{ line: 1, reason }]);
  });

  it('names the first few bad lines in the error message and counts the rest', () => {
    const lines: unknown[] = tenExamples();
    for (const i of [2, 4, 5, 6, 7, 8, 9]) lines[i] = 'not json';
    const report = validate(jsonl(lines));

    expect(report.errors.map((e) => e.line)).toEqual([3, 5, 6, 7, 8]);
    expect(report.errorCount).toBe(7);
    const err = assertionError(report);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, path: ['file'], code: 'invalid_dataset' });
    expect(err.message).toBe(
      'Invalid fine-tune dataset: line 3: invalid JSON; line 5: invalid JSON; line 6: invalid JSON; ' +
        'line 7: invalid JSON; line 8: invalid JSON (and 2 more lines with errors)',
    );
  });

  it('respects maxReportedErrors', () => {
    const report = validate(jsonl(['x', 'y', 'z']), [], { maxReportedErrors: 2 });

    expect(assertionError(report).message).toBe('Invalid fine-tune dataset: line 1: invalid JSON; line 2: invalid JSON (and 1 more line with errors)');
  });

  it('refuses fewer than 10 examples', () => {
    const report = validate(jsonl(tenExamples().slice(0, 9)));

    expect(report).toMatchObject({ examples: 9, errors: [] });
    const err = assertionError(report);
    expect(err).toMatchObject({ status: 400, path: ['file'], code: 'invalid_dataset' });
    expect(err.message).toBe('Invalid fine-tune dataset: the file has 9 examples; at least 10 are required');
  });

  it('honours a custom minExamples and refuses an empty file', () => {
    expect(() => assertValidDataset(validate(jsonl([chatExample()]), [], { minExamples: 1 }))).not.toThrow();
    expect(assertionError(validate('')).message).toContain('has 0 examples; at least 10 are required');
  });

  it('reports invalid UTF-8 on the line where it occurs and stops checking', () => {
    const before = Buffer.from(jsonl(tenExamples().slice(0, 2)));
    const data = Buffer.concat([before, Buffer.from([0xff, 0xfe]), Buffer.from('\n{"broken\n')]);
    const report = validate(data);

    expect(report.errors).toEqual([{ line: 3, reason: 'invalid UTF-8' }]);
    expect(report.examples).toBe(2);
    expect(assertionError(report).message).toBe('Invalid fine-tune dataset: line 3: invalid UTF-8');
  });

  it('reports a multi-byte sequence cut short by a newline as invalid UTF-8', () => {
    const euro = Buffer.from('€'); // 3 bytes
    const data = Buffer.concat([Buffer.from('{"messages": "'), euro.subarray(0, 2), Buffer.from('"}\n')]);

    expect(validate(data, [15]).errors).toEqual([{ line: 1, reason: 'invalid UTF-8' }]);
  });

  it('reports a line over the size cap without holding it, and goes on with the next line', () => {
    const long = JSON.stringify({ messages: [{ role: 'assistant', content: 'x'.repeat(500) }] });
    const data = jsonl([long, chatExample()]);

    const report = validate(data, [100, 100, 100], { maxLineBytes: 256, minExamples: 1 });

    expect(report.errors).toEqual([{ line: 1, reason: 'line is longer than 256 bytes' }]);
    expect(report.examples).toBe(1);
  });

  it('ignores a byte-order mark at the start of the file', () => {
    expect(validate('\ufeff' + jsonl(tenExamples()))).toMatchObject({ examples: 10, errors: [] });
  });
});
