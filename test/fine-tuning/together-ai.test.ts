/**
 * Hosted (provider-mode) fine-tuning jobs on a `together-ai` integration against the fake Together,
 * on the hosted-job contract. Together's own: the monitor waits while Together validates the uploaded
 * file before creating the job; Together's events, metrics and checkpoints; `model_output_name` as
 * `fine_tuned_model`, answering chat with the integration's credentials.
 */
import { startFakeTogether, type TogetherJob } from '../fakes/together-server';
import { hostedJobContract } from '../support/hosted-kit';
import { dataset } from './harness';
import { openAIWireSent, type SentTools } from '../chat/sdk-suite';
import { expectLedgered } from '../usage/harness';

const KEY = 'tg-hosted-key-0123456789abcdef';
const BASE = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';
/** Long enough a job to still be running when the test fails or cancels it. */
const LONG = { method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 50 } } } };

const hosted = hostedJobContract('together-ai', {
  start: () => startFakeTogether({ apiKey: KEY, userId: 'acme' }),
  env: (fake) => ({ GATEWAY_TOGETHER_BASE_URL: fake.url }),
  integrations: () => [{ slug: 'my-together', provider: 'together-ai', name: 'Together', credentials: { api_key: KEY } }],
  model: BASE,
  dataset: dataset(),
  remote: (fake, id): TogetherJob | undefined => fake.state.jobs.get(id),
  succeeded: {
    job: {
      seed: 11,
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2, batch_size: 4 } } },
      provider_options: { learning_rate: 0.0001, training_type: 'lora' },
    },
    done: (remote) => ({ fine_tuned_model: remote.model_output_name, trained_tokens: expect.any(Number), hyperparameters: { n_epochs: 2, batch_size: 4 } }),
    events: (remote) => [
      `Job finished: ${remote.model_output_name}`,
      'Training started',
      expect.stringMatching(/^Uploaded training file to together-ai as file-/),
    ],
    once: 'Fine tune request created',
    checkpoints: (remote) => [
      expect.objectContaining({ fine_tuned_model_checkpoint: `${remote.id}:6`, step_number: 6, metrics: expect.objectContaining({ 'train/epoch': 2 }) }),
    ],
    check: async (remote, done) => {
      // What Together was sent, exactly: neither the metadata (the gateway keeps it) nor the training type (LoRA is its default).
      const sent = {
        model: BASE,
        training_file: remote.training_file,
        suffix: 'hosted-run',
        n_epochs: 2,
        batch_size: 4,
        learning_rate: 0.0001,
        random_seed: 11,
      };
      expect(hosted.fake.state.fineTuneRequests).toEqual([sent]);
      expect(remote.status).toBe('completed');
      expect(hosted.fake.state.fileContents.get(remote.training_file)?.toString()).toBe(dataset());
      // The monitor read the file until Together had validated it (PENDING → RUNNING → COMPLETED) before creating the job.
      const requests = hosted.fake.state.requests.map((r) => `${r.method} ${r.path}`);
      const reads = requests.slice(0, requests.indexOf('POST /v1/fine-tunes')).filter((r) => r === `GET /v1/files/${remote.training_file}`);
      expect(reads).toHaveLength(2);
      const events = (await hosted.client.fineTuning.jobs.listEvents(done.id, { limit: 100 })).data;
      expect(events.filter((e) => e.type === 'metrics').map((e) => e.data)).toEqual([
        expect.objectContaining({ step: 6, 'train/epoch': 2 }),
        expect.objectContaining({ step: 3, 'train/epoch': 1 }),
      ]);
    },
  },
  failed: {
    job: LONG,
    fail: (fake, id) => fake.failJob(id, 'Training failed: out of memory'),
    error: { code: 'job_error', message: expect.stringContaining('out of memory') },
  },
  cancel: {
    job: LONG,
    when: 'running',
    stopped: (remote, _events, fake) => {
      expect(remote.status).toBe('cancelled');
      expect(fake.state.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cancel'))).toHaveLength(1);
    },
  },
  tools: { sent: (): SentTools => openAIWireSent(hosted.fake.state.chatRequests.at(-1)!), atSlug: BASE },
});

describe('hosted fine-tuning jobs on Together AI', () => {
  const model = () => hosted.succeeded!.fine_tuned_model!;
  it('serves the tuned model through chat completions, streamed or not, with the integration’s credentials', async () => {
    const completion = await hosted.client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'Hello Together' }] });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: model(),
      choices: [{ message: { role: 'assistant', content: `Answer from ${model()}: Hello Together` } }],
    });
    // Together was called with the model Together named, and the integration's key (the fake checks it).
    expect(hosted.fake.state.chatRequests.at(-1)).toMatchObject({ model: model(), messages: [{ role: 'user', content: 'Hello Together' }] });

    const stream = await hosted.client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'Stream it' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(`Answer from ${model()}: Stream it`);
    // The usage ledger holds both calls: the stream's tokens too, though this caller did not ask for them.
    await expectLedgered(hosted.gw, 'together-ai', [
      { streamed: false, usage: completion.usage },
      { streamed: true, usage: undefined },
    ]);
  });
});
