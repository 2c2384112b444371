/**
 * Proves the fake OpenAI faithful by driving it with the official `openai` client pointed at it
 * (`new OpenAI({baseURL})`): files, fine-tuning, and chat completions plain and streamed.
 */
import OpenAI, { APIError, toFile } from 'openai';
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

async function apiError(call: Promise<unknown>): Promise<APIError> {
  const outcome = await call.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(APIError);
  return outcome as APIError;
}

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
