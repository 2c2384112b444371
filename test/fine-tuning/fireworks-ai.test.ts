/**
 * Hosted (provider-mode) fine-tuning jobs on a `fireworks-ai` integration against the fake Fireworks,
 * on the hosted-job contract. Fireworks' own: the dataset uploaded byte for byte, the job created
 * under an id derived from the gateway's, its output model as `fine_tuned_model`, served on a
 * deployment. Fireworks has no cancel: a hosted cancel ends the job `cancelled` with an event saying
 * the Fireworks job keeps running, and the gateway stops following it (nothing is deleted there).
 */
import { startFakeFireworks, type FireworksSftJob } from '../fakes/fireworks-server';
import { hostedJobContract } from '../support/hosted-kit';
import { dataset } from './harness';
import { openAIWireSent, type SentTools } from '../chat/sdk-suite';

const KEY = 'fw-hosted-key-0123456789abcdef';
const ACCOUNT = 'acme-labs';
const BASE = 'llama-v3p1-8b-instruct';
const SERVING = `accounts/${ACCOUNT}/deployments/chat-serving`;

const hosted = hostedJobContract('fireworks-ai', {
  start: () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, runningPolls: 3 }),
  env: (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }),
  integrations: () => [
    {
      slug: 'my-fireworks',
      provider: 'fireworks-ai',
      name: 'Fireworks',
      credentials: { api_key: KEY },
      options: { 'x-gateway-fireworks-account-id': ACCOUNT },
    },
  ],
  model: BASE,
  dataset: dataset(),
  remote: (fake, id): FireworksSftJob | undefined => fake.state.jobs.get(id),
  succeeded: {
    job: { provider_options: { learning_rate: 0.0002 } },
    done: (remote) => ({ fine_tuned_model: remote.outputModel }),
    events: (remote) => [
      `Uploaded training file to fireworks-ai as ${remote.dataset.split('/').pop()}`,
      `Job completed: output model ${remote.outputModel}`,
      expect.stringMatching(/^Training 100% done/),
    ],
    once: /^Fine-tuning job created:/,
    checkpoints: (remote, id) => [expect.objectContaining({ fine_tuned_model_checkpoint: remote.outputModel, step_number: 2, fine_tuning_job_id: id })],
    check: async (remote, done) => {
      expect(remote).toMatchObject({
        name: `accounts/${ACCOUNT}/supervisedFineTuningJobs/gw-${done.id}`,
        baseModel: `accounts/fireworks/models/${BASE}`,
        displayName: 'hosted-run',
        outputModel: `accounts/${ACCOUNT}/models/hosted-run-${done.id.slice(0, 8)}`,
        epochs: 2,
        learningRate: 0.0002,
        state: 'JOB_STATE_COMPLETED',
      });
      // The dataset arrived byte for byte, in a dataset of the account.
      expect(hosted.fake.state.datasetFiles.get(remote.dataset.split('/').pop()!)?.get('train.jsonl')?.content?.toString()).toBe(dataset());
      expect((await hosted.messagesOf(done.id)).filter((m) => m.startsWith('Training 100% done'))).toHaveLength(1);
    },
  },
  refused: [
    ['another account in gateway_options', { gateway_options: { 'x-gateway-fireworks-account-id': 'other-labs' } }, { code: 'setting_not_overridable' }],
  ],
  failures: [
    [
      'asking for a learning-rate multiplier',
      { method: { type: 'supervised', supervised: { hyperparameters: { learning_rate_multiplier: 2 } } } },
      { code: 'unsupported_parameter', param: 'method.supervised.hyperparameters.learning_rate_multiplier' },
      (fake, id) => expect(fake.state.jobs.has(`gw-${id}`)).toBe(false),
    ],
  ],
  cancel: {
    // Every read of a hosted job fails from now on, so the job stays where the submission left it.
    hold: (fake) => fake.failNext('GET', `/v1/accounts/${ACCOUNT}/supervisedFineTuningJobs/gw-`, 503, { times: 1_000_000 }),
    answers: ['cancelled'],
    stopped: (remote, events, fake) => {
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            level: 'warn',
            message: 'Fireworks AI has no cancel operation: the job keeps running there, and the gateway no longer follows it',
            data: { provider_job_id: remote.name.split('/').pop() },
          }),
        ]),
      );
      // Nothing was deleted at Fireworks.
      expect(fake.state.jobs.get(remote.name.split('/').pop()!)).toBe(remote);
      expect(fake.state.requests.some((r) => r.method === 'DELETE')).toBe(false);
    },
  },
  // A model of an account answers only on a deployment: the gateway says which header names it, before calling Fireworks.
  deployment: {
    header: 'x-gateway-fireworks-deployment',
    refusal: new RegExp(`^Fireworks AI serves accounts/${ACCOUNT}/models/hosted-run-[0-9a-f]{8} only on a dedicated deployment: `),
    calls: (): unknown[] => hosted.fake.state.chatRequests,
    deploy: (model) => {
      hosted.fake.deploy(model, SERVING);
      return { value: 'chat-serving', servedAs: `${model}#${SERVING}` };
    },
    sent: (_value, model) => ({ model: `${model}#${SERVING}` }),
  },
  tools: { sent: (): SentTools => openAIWireSent(hosted.fake.state.chatRequests.at(-1)!), atSlug: BASE },
});
