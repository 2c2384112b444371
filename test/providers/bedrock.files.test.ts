/**
 * Bedrock datasets against the fake S3, through the registry's ProviderClient: the OpenAI chat JSONL
 * converted line by line into the base model's record format (Converse for Nova, `{system, messages}`
 * for Claude, `{prompt, completion}` for Titan; the first two are checked through HTTP in
 * client-mode/bedrock), a line that cannot be converted refused by number,
 * a large dataset streamed as a multipart upload of ≥ 5 MiB parts with flat memory, and the file
 * operations on the bucket. Every request was SigV4-signed and verified by the fake.
 */
import { Readable } from 'node:stream';
import { failure } from '../support/expect';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock-server';
import { MIN_PART_SIZE } from '../fakes/s3-server';
import { bedrock, chatDataset, chatExample, CLAUDE, DEFAULT_BUCKET, expectRecords, NOVA, requestCount, storedLines, TITAN, upload } from './bedrock-harness';

let fake: FakeBedrock;

beforeEach(async () => {
  fake = await startFakeBedrock();
});

afterEach(() => fake.close());

const message = (role: string, content: unknown, extra = {}) => ({ role, content, ...extra });
/** One JSONL line of the OpenAI chat format: `[role, content, extra members]` per message. */
const line = (...messages: Array<[string, unknown, object?]>) => JSON.stringify({ messages: messages.map((m) => message(...m)) });

describe('dataset conversion on upload (Nova and Claude records: client-mode/bedrock)', () => {
  it('writes {prompt, completion} for a Titan-style text model named by its ARN', async () => {
    const file = await upload(bedrock(fake), chatDataset(12), `arn:aws:bedrock:us-east-1::foundation-model/${TITAN}`);
    expectRecords(storedLines(fake, file.id), TITAN);
  });

  it('joins text parts, and puts the upload at x-gateway-aws-s3-object-key when given', async () => {
    const parts = ['Hi ', 'there'].map((text) => ({ type: 'text', text }));
    const client = bedrock(fake, { headers: { 'x-gateway-aws-s3-object-key': 'datasets/mine.jsonl' } });
    const file = await upload(client, `${line(['user', parts], ['assistant', 'Hello'])}\n`, CLAUDE);
    expect(file).toMatchObject({ id: `s3://${DEFAULT_BUCKET}/datasets/mine.jsonl`, filename: 'mine.jsonl' });
    expect(storedLines(fake, file.id)).toEqual([{ messages: [message('user', 'Hi there'), message('assistant', 'Hello')] }]);
  });

  it.each([
    ['a tool call', line(['user', 'x'], ['assistant', null, { tool_calls: [{ id: 't' }] }]), /line 3: messages\[1\]: tool calls/],
    ['two user turns', line(['user', 'a'], ['user', 'b'], ['assistant', 'c']), /line 3: messages\[1\]: .*alternate/],
    ['no final answer', line(['user', 'a']), /line 3: the conversation must end with an assistant message/],
    ['not JSON', '{oops', /line 3: invalid JSON/],
    [
      'more than one exchange for a Titan-style text model',
      line(['user', 'm0'], ['assistant', 'm1'], ['user', 'm2'], ['assistant', 'm3']),
      /line 3: text models take one exchange per example/,
      TITAN,
    ],
  ])('refuses a line with %s, naming it, and leaves nothing in the bucket', async (_what, bad, message, model = NOVA) => {
    const content = [chatExample(1), chatExample(2), bad, chatExample(4)].join('\n');
    const err = await failure(upload(bedrock(fake), content, model), 'invalid_request');
    expect(err).toMatchObject({ code: 'invalid_dataset', message: expect.stringMatching(message) });
    expect(fake.s3.state.buckets.get(DEFAULT_BUCKET)!.size).toBe(0);
    expect(fake.s3.state.uploads.size).toBe(0);
  });

  it('deletes the object again when a pass-through upload turns out to have no purpose', async () => {
    const purpose = Promise.reject(new Error('purpose is required'));
    purpose.catch(() => undefined);
    const uploading = bedrock(fake).uploadFile({ filename: 'late.jsonl', purpose, model: NOVA, open: () => Readable.from([Buffer.from(chatDataset())]) });
    await expect(uploading).rejects.toThrow('purpose is required');
    expect(fake.s3.state.buckets.get(DEFAULT_BUCKET)!.size).toBe(0);
  });
});

/** ~`megabytes` MB of chat JSONL, made as it is read (never whole in memory); `read` says how much was. */
function largeDataset(megabytes: number) {
  const line = `${JSON.stringify({
    messages: [
      { role: 'system', content: 'S'.repeat(400) },
      { role: 'user', content: 'Q'.repeat(300) },
      { role: 'assistant', content: 'A'.repeat(300) },
    ],
  })}\n`;
  const examples = Math.ceil((megabytes * 1024 * 1024) / line.length);
  const progress = { read: 0, total: examples * line.length };
  const lines = function* () {
    for (let i = 0; i < examples; i++) {
      progress.read += line.length;
      yield Buffer.from(line);
    }
  };
  return { examples, progress, stream: Readable.from(lines()) };
}

describe('large datasets', () => {
  it('streams a 20 MB dataset as a multipart upload of parts ≥ 5 MiB, with flat memory', async () => {
    const { stream, examples, progress } = largeDataset(20);
    // The fake S3 runs in this process: what it holds (parts received, objects stored) is not the adapter's.
    const sum = (sizes: number[]) => sizes.reduce((a, b) => a + b, 0);
    const fakeHeld = () =>
      sum([...fake.s3.state.uploads.values()].flatMap((u) => [...u.parts.values()].map((p) => p.bytes.length))) +
      sum([...fake.s3.state.buckets.get(DEFAULT_BUCKET)!.values()].map((o) => o.bytes.length));
    let readWhenFirstPartArrived: number | undefined;
    const before = process.memoryUsage().rss;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss - before - fakeHeld());
      if ([...fake.s3.state.uploads.values()].some((u) => u.parts.size > 0)) readWhenFirstPartArrived ??= progress.read;
    }, 5);
    try {
      const file = await bedrock(fake).uploadFile({ filename: 'big.jsonl', purpose: 'fine-tune', model: NOVA, open: () => stream });
      const [completed] = fake.s3.state.completedUploads;
      expect(completed.partSizes.length).toBeGreaterThanOrEqual(4);
      expect(completed.partSizes.slice(0, -1).every((size) => size >= MIN_PART_SIZE)).toBe(true);
      expect(completed.partSizes.reduce((a, b) => a + b, 0)).toBe(file.bytes);
      expect(file.bytes).toBeGreaterThan(20 * 1024 * 1024);
      const stored = fake.s3.getObject(DEFAULT_BUCKET, completed.key)!;
      expect(stored.toString('utf8').split('\n').filter(Boolean)).toHaveLength(examples);
    } finally {
      clearInterval(sampler);
    }
    // Streamed: the first part reached S3 while the dataset was still being read (two parts go up at a time).
    expect(readWhenFirstPartArrived).toBeLessThan(3 * MIN_PART_SIZE);
    expect(readWhenFirstPartArrived).toBeLessThan(progress.total);
    // Memory beyond what the fake holds: two parts in flight, the fake's transient copies (its final concatenation of
    // the parts alone is the file's size), garbage not yet collected. Generous: the check above is the sharp one.
    expect(peak).toBeLessThan(128 * 1024 * 1024);
  });

  it('aborts the multipart upload when a line far into a large dataset cannot be converted', async () => {
    const { stream } = largeDataset(12);
    const broken = Readable.from(
      (async function* () {
        yield* stream;
        yield Buffer.from('{"messages": []}\n');
      })(),
    );
    const err = await failure(bedrock(fake).uploadFile({ filename: 'big.jsonl', purpose: 'fine-tune', model: NOVA, open: () => broken }), 'invalid_request');
    expect(err.message).toMatch(/line \d{4,}: the conversation must end with an assistant message/);
    expect(fake.s3.state.uploads.size).toBe(0);
    expect(fake.s3.state.completedUploads).toEqual([]);
    expect(fake.s3.state.requests.some((r) => r.method === 'DELETE' && r.query.has('uploadId'))).toBe(true);
  });
});

describe('file operations on the bucket (the contract has the rest)', () => {
  it.each(['file-abc', 's3://other-bucket/gateway-files/x.jsonl', `s3://${DEFAULT_BUCKET}/a/../b.jsonl`, `s3://${DEFAULT_BUCKET}/`])(
    'refuses the file id %j before any request',
    async (id) => {
      const err = await failure(bedrock(fake).getFile(id), 'invalid_request');
      expect(err.code).toBe('invalid_file_id');
      expect(requestCount(fake)).toBe(0);
    },
  );

  it('needs the bucket for file operations, naming its header', async () => {
    const err = await failure(bedrock(fake, { headers: { 'x-gateway-aws-s3-bucket': undefined } }).listFiles({}), 'invalid_request');
    expect(err).toMatchObject({ param: 'x-gateway-aws-s3-bucket', code: 'missing_setting' });
  });
});
