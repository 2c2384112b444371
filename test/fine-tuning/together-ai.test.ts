/**
 * Hosted (provider-mode) fine-tuning jobs on a `together-ai` integration, through the OpenAI SDK
 * against the fake Together: the job monitor uploads the dataset, waits while Together validates it,
 * creates the job, and follows it to `succeeded` with Together's `model_output_name`, storing
 * Together's events, metrics and checkpoints once each; a cancel reaches Together and the job reads
 * `cancelled` once Together has stopped it.
 */
import { startFakeTogether } from '../fakes/together-server';
import { hostedOnFake } from '../support/hosted-kit';
import { dataset } from './harness';
import { openAIWireSent, toolRequestCase } from '../chat/sdk-suite';
import { expectLedgered } from '../usage/harness';

const KEY = 'tg-hosted-key-0123456789abcdef';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

/** The first test's succeeded job, which the chat test then talks to. */
let tuned: { id: string; model: string } | undefined;

const hosted = hostedOnFake({
  start: () => startFakeTogether({ apiKey: KEY, userId: 'acme' }),
  env: (fake) => ({ GATEWAY_TOGETHER_BASE_URL: fake.url }),
  integrations: () => [{ slug: 'my-together', provider: 'together-ai', name: 'Together', credentials: { api_key: KEY } }],
  model: BASE,
  dataset: dataset(),
});
const { createJob, waitForStatus } = hosted;

/** The fake's job for a gateway job: the one trained on the file the monitor uploaded for it. */
async function remoteOf(id: string) {
  const events = (await hosted.client.fineTuning.jobs.listEvents(id, { limit: 100 })).data;
  const submitted = events.find((e) => e.message.startsWith('Submitted to together-ai as '));
  return submitted ? hosted.fake.state.jobs.get(submitted.message.split(' ').pop()!) : undefined;
}

describe('hosted fine-tuning jobs on Together AI', () => {
  it('uploads, waits for validation, submits and follows a job to succeeded with the output model, events and checkpoints', async () => {
    const created = await createJob({
      suffix: 'hosted',
      seed: 11,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, batch_size: 4 } } },
      provider_options: { learning_rate: 0.0001, training_type: 'lora' },
    });
    const done = await waitForStatus(created.id, ['succeeded', 'failed']);
    const remote = (await remoteOf(created.id))!;
    expect(remote).toMatchObject({ model: BASE, suffix: 'hosted', n_epochs: 2, batch_size: 4, learning_rate: 0.0001, random_seed: 11, status: 'completed' });
    expect(hosted.fake.state.fileContents.get(remote.training_file)?.toString()).toBe(dataset());
    // The monitor read the file until Together had validated it (PENDING → RUNNING → COMPLETED) before creating the job.
    const requests = hosted.fake.state.requests.map((r) => `${r.method} ${r.path}`);
    const reads = requests.slice(0, requests.indexOf('POST /v1/fine-tunes')).filter((r) => r === `GET /v1/files/${remote.training_file}`);
    expect(reads).toHaveLength(2);
    expect(done).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: remote.model_output_name,
      trained_tokens: expect.any(Number),
      training_file: hosted.trainingFileId,
    });
    expect(done.hyperparameters).toMatchObject({ n_epochs: 2, batch_size: 4 });
    tuned = { id: done.id, model: done.fine_tuned_model! };

    const events = (await hosted.client.fineTuning.jobs.listEvents(created.id, { limit: 100 })).data;
    const messages = events.map((e) => e.message);
    expect(messages[0]).toBe('Job status changed from running to succeeded');
    expect(messages).toEqual(
      expect.arrayContaining([
        `Job finished: ${remote.model_output_name}`,
        'Training started',
        expect.stringMatching(/^Uploaded training file to together-ai as file-/),
      ]),
    );
    expect(messages.filter((m) => m === 'Fine tune request created')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'metrics').map((e) => e.data)).toEqual([
      expect.objectContaining({ step: 6, 'train/epoch': 2 }),
      expect.objectContaining({ step: 3, 'train/epoch': 1 }),
    ]);

    const checkpoints = await hosted.client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data).toEqual([
      expect.objectContaining({ fine_tuned_model_checkpoint: `${remote.id}:6`, step_number: 6, metrics: expect.objectContaining({ 'train/epoch': 2 }) }),
    ]);
  });

  it('serves the tuned model through chat completions, streamed or not, with the integration’s credentials', async () => {
    expect(tuned).toBeDefined();
    const { model } = tuned!;
    const completion = await hosted.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello Together' }] });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model,
      choices: [{ message: { role: 'assistant', content: `Answer from ${model}: Hello Together` } }],
    });
    // Together was called with the model Together named, and the integration's key (the fake checks it).
    expect(hosted.fake.state.chatRequests.at(-1)).toMatchObject({ model, messages: [{ role: 'user', content: 'Hello Together' }] });

    const stream = await hosted.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Stream it' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(`Answer from ${model}: Stream it`);
    // The usage ledger holds both calls: the stream's tokens too, though this caller did not ask for them.
    await expectLedgered(hosted.gw, 'together-ai', [
      { streamed: false, usage: completion.usage },
      { streamed: true, usage: undefined },
    ]);
  });

  describe('tools and structured outputs, as sent', () => {
    const sent = () => openAIWireSent(hosted.fake.state.chatRequests.at(-1)!);
    toolRequestCase('Together fine-tuned model', () => ({ model: tuned!.model, client: () => hosted.client, sent }));
    toolRequestCase('Together @slug/model', () => ({ model: `@my-together/${BASE}`, client: () => hosted.client, sent }));
  });

  it('cancels at Together: running while Together stops it, then cancelled', async () => {
    const created = await createJob({ method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 50 } } } });
    await waitForStatus(created.id, ['running']);
    const cancelling = await hosted.client.fineTuning.jobs.cancel(created.id);
    expect(['running', 'cancelled']).toContain(cancelling.status);
    const done = await waitForStatus(created.id, ['cancelled', 'succeeded', 'failed']);
    expect(done.status).toBe('cancelled');
    expect((await remoteOf(created.id))?.status).toBe('cancelled');
    expect(hosted.fake.state.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cancel'))).toHaveLength(1);
  });
});
