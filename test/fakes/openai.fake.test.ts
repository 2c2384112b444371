/**
 * Proves the fake OpenAI faithful by driving it with the official `openai` client pointed at it
 * (`new OpenAI({baseURL})`): files, fine-tuning, and chat completions plain and streamed.
 */
import OpenAI, { toFile } from 'openai';
import { apiError } from '../support/expect';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { startFakeOpenAI, type FakeOpenAI } from './openai-server';

const API_KEY = 'sk-test-proof-0123456789';
const DATASET = Buffer.from(
  [1, 2]
    .map((n) =>
      JSON.stringify({
        messages: [
          { role: 'user', content: `Q${n}` },
          { role: 'assistant', content: `A${n}` },
        ],
      }),
    )
    .join('\n') + '\n',
);

let fake: FakeOpenAI;
let client: OpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: API_KEY });
  client = new OpenAI({ apiKey: API_KEY, baseURL: fake.url, maxRetries: 0 });
});

afterEach(() => fake.close());

const upload = async (name = 'train.jsonl', purpose: 'fine-tune' | 'batch' = 'fine-tune') =>
  client.files.create({ file: await toFile(DATASET, name), purpose });

/** A job driven to succeeded by polling, as the gateway's monitor does. */
async function succeededJob() {
  const file = await upload();
  let job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: file.id, suffix: 'proof' });
  while (job.status !== 'succeeded') job = await client.fineTuning.jobs.retrieve(job.id);
  return job;
}

describe('fake OpenAI, files', () => {
  it('uploads, lists with purpose, order and cursor, serves the bytes and deletes', async () => {
    const a = await upload('a.jsonl');
    const b = await upload('b.jsonl', 'batch');
    const c = await upload('c.jsonl');
    expect(a).toMatchObject({ id: expect.stringMatching(/^file-/), object: 'file', bytes: DATASET.length, filename: 'a.jsonl', status: 'processed' });

    const newest = await client.files.list({ limit: 2 });
    expect(newest.data.map((f) => f.id)).toEqual([c.id, b.id]);
    expect(newest.has_more).toBe(true);
    const raw = await (await client.files.list({ limit: 2 }).asResponse()).json();
    expect(raw).toMatchObject({ object: 'list', first_id: c.id, last_id: b.id, has_more: true });
    expect((await newest.getNextPage()).data.map((f) => f.id)).toEqual([a.id]);
    expect((await client.files.list({ order: 'asc', purpose: 'fine-tune' })).data.map((f) => f.id)).toEqual([a.id, c.id]);

    const content = await client.files.content(b.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(DATASET)).toBe(true);

    expect(await client.files.delete(b.id)).toEqual({ id: b.id, object: 'file', deleted: true });
    expect(fake.state.files.has(b.id)).toBe(false);
    const gone = await apiError(client.files.retrieve(b.id));
    expect(gone.status).toBe(404);
    expect(gone.error).toMatchObject({ message: `No such File object: ${b.id}`, param: 'id' });
  });

  it('refuses an unknown list order', async () => {
    const bad = await apiError(client.files.list({ order: 'sideways' as 'asc' }));
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ param: 'order' });
  });
});

describe('fake OpenAI, fine-tuning', () => {
  it('fails a job failJob marked on its next poll', async () => {
    const file = await upload();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: file.id });
    fake.failJob(job.id);

    const failed = await client.fineTuning.jobs.retrieve(job.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'invalid_training_file', param: 'training_file' }, fine_tuned_model: null });
    expect((await client.fineTuning.jobs.listEvents(job.id)).data[0].level).toBe('error');
  });
});

describe('fake OpenAI, chat completions', () => {
  const messages = [{ role: 'user' as const, content: 'Hello there' }];

  it("answers a succeeded job's fine-tuned model and records the request", async () => {
    const job = await succeededJob();
    const completion = await client.chat.completions.create({ model: job.fine_tuned_model!, messages });

    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: job.fine_tuned_model,
      choices: [{ message: { role: 'assistant', content: `Answer from ${job.fine_tuned_model}: Hello there` }, finish_reason: 'stop' }],
    });
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    expect(fake.state.chatRequests).toEqual([
      {
        model: job.fine_tuned_model,
        body: { model: job.fine_tuned_model, messages },
        headers: expect.objectContaining({ authorization: `Bearer ${API_KEY}` }),
      },
    ]);
  });

  it('streams chunk by chunk, with a usage chunk when asked', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Answer from gpt-4o-mini: Hello there');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
  });

  it('counts a stream the client abandoned midway', async () => {
    fake.setStreamDelay(30);
    const story = [{ role: 'user' as const, content: 'tell me a long story please' }];
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: story, stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
    }

    const deadline = Date.now() + 2_000;
    while (fake.state.abandonedStreams === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fake.state.abandonedStreams).toBe(1);
  });

  it('answers an unknown or unfinished model with 404 model_not_found, and a bad body with 400', async () => {
    const unknown = await apiError(client.chat.completions.create({ model: 'ft:gpt-4o-mini:org:nope:ftjob-x', messages }));
    expect(unknown.status).toBe(404);
    expect(unknown.code).toBe('model_not_found');

    const file = await upload();
    const running = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: file.id });
    const model = `ft:gpt-4o-mini-2024-07-18:fake:${running.id}`;
    expect((await apiError(client.chat.completions.create({ model, messages }))).code).toBe('model_not_found');

    const noMessages = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: undefined as never }));
    expect(noMessages.status).toBe(400);
    expect(noMessages.error).toMatchObject({ param: 'messages', code: 'missing_required_parameter' });
    expect(fake.state.chatRequests).toEqual([]);
  });

  it('refuses a wrong key before anything is recorded', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong-key-000000000', baseURL: fake.url, maxRetries: 0 });
    const refused = await apiError(wrong.chat.completions.create({ model: 'gpt-4o-mini', messages }));
    expect(refused.status).toBe(401);
    expect(refused.code).toBe('invalid_api_key');
    expect(fake.state.chatRequests).toEqual([]);
  });
});

describe('the fake OpenAI’s Batch API, driven by the openai SDK', () => {
  const line = (id: string, model = 'gpt-4o-mini') =>
    JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `Q ${id}` }] } });
  const batchFile = (lines: string[]) => toFile(Buffer.from(lines.join('\n') + '\n'), 'batch.jsonl');
  const create = async (lines: string[]) => {
    const file = await client.files.create({ file: await batchFile(lines), purpose: 'batch' });
    return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'a' } });
  };
  const poll = async (id: string) => {
    for (let i = 0; i < 20; i++) {
      const batch = await client.batches.retrieve(id);
      if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) return batch;
    }
    throw new Error('batch did not finish');
  };
  const contentLines = async (id: string) =>
    (await (await client.files.content(id)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));

  it('runs a batch through validating, in_progress and finalizing to completed, with output and error files', async () => {
    fake.batches.failRequests(['r2'], 429);
    const created = await create([line('r1'), line('r2'), line('r3')]);
    expect(created).toMatchObject({ object: 'batch', status: 'validating', metadata: { run: 'a' }, request_counts: { total: 0 } });
    expect((await client.batches.retrieve(created.id)).status).toBe('in_progress');
    const batch = await poll(created.id);
    expect(batch).toMatchObject({ status: 'completed', model: 'gpt-4o-mini', request_counts: { total: 3, completed: 2, failed: 1 } });
    expect(batch.usage!.total_tokens).toBeGreaterThan(0);
    expect((await client.files.retrieve(batch.output_file_id!)).purpose).toBe('batch_output');
    const output = await contentLines(batch.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(['r1', 'r3']);
    expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion', usage: expect.any(Object) } }, error: null });
    expect(await contentLines(batch.error_file_id!)).toEqual([
      expect.objectContaining({ custom_id: 'r2', response: expect.objectContaining({ status_code: 429 }) }),
    ]);
    const list = await client.batches.list({ limit: 10 });
    expect(list.data.map((b) => b.id)).toEqual([created.id]);
  });

  it('fails a file that mixes models or repeats a custom_id, naming the lines', async () => {
    const batch = await poll((await create([line('a'), line('a'), line('b', 'gpt-4o')])).id);
    expect(batch.status).toBe('failed');
    expect(batch.errors!.data!.map((e) => [e.code, e.line])).toEqual([
      ['duplicate_custom_id', 2],
      ['model_mismatch', 3],
    ]);
  });

  it('cancels: cancelling, then cancelled with the requests done so far; expires with the rest as batch_expired', async () => {
    fake.batches.setLinesPerPoll(1);
    const created = await create([line('c1'), line('c2'), line('c3')]);
    await client.batches.retrieve(created.id); // in_progress
    await client.batches.retrieve(created.id); // one request done
    expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
    const cancelled = await client.batches.retrieve(created.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', request_counts: { total: 3, completed: 1 } });
    expect((await contentLines(cancelled.output_file_id!)).map((l) => l.custom_id)).toEqual(['c1']);

    const other = await create([line('e1'), line('e2')]);
    await client.batches.retrieve(other.id);
    await client.batches.retrieve(other.id);
    fake.batches.expire(other.id);
    const expired = await client.batches.retrieve(other.id);
    expect(expired.status).toBe('expired');
    expect(await contentLines(expired.error_file_id!)).toEqual([
      expect.objectContaining({ custom_id: 'e2', response: null, error: { code: 'batch_expired', message: expect.any(String) } }),
    ]);
  });
});
