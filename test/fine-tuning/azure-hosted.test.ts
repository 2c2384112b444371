/**
 * Hosted jobs on an `azure-openai` integration against the fake Azure OpenAI, on the hosted-job
 * contract. Azure's own: the monitor waits until Azure has processed the uploaded dataset before
 * creating the job (hyperparameters top-level, as the 2024-10-21 API wants), and records Azure's
 * `fine_tuned_model`; a file Azure would refuse never reaches it.
 */
import { toFile } from 'openai';
import { AZURE_TEST_API_KEY, AZURE_TEST_RESOURCE, startFakeAzureOpenAI, type AzureFakeJob } from '../fakes/azure-openai-server';
import { hostedJobContract } from '../support/hosted-kit';
import { dataset } from './harness';

const hosted = hostedJobContract('azure-openai', {
  // Files are processed one poll after upload: the monitor must see them pending first.
  start: () => startFakeAzureOpenAI({ pollsToProcessFile: 2 }),
  env: (azure) => ({ GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate }),
  integrations: () => [
    {
      slug: 'my-azure',
      provider: 'azure-openai',
      credentials: { api_key: AZURE_TEST_API_KEY },
      options: { 'x-gateway-azure-resource-name': AZURE_TEST_RESOURCE },
    },
  ],
  model: 'gpt-4o-mini-2024-07-18',
  dataset: dataset(),
  refusedOption: { learning_rate: 0.001 },
  remote: (fake, id): AzureFakeJob | undefined => fake.state.jobs.get(id),
  succeeded: {
    done: (remote) => ({ fine_tuned_model: remote.fine_tuned_model }),
    events: () => ['Job started.'],
    once: 'Job enqueued. Waiting for jobs ahead to complete.',
    checkpoints: (remote): unknown[] =>
      [...hosted.fake.state.checkpoints.get(remote.id)!]
        .reverse()
        .map((c) => expect.objectContaining({ step_number: c.step_number, fine_tuned_model_checkpoint: c.fine_tuned_model_checkpoint })),
    check: (remote, done) => {
      expect(done.fine_tuned_model).toMatch(/^gpt-4o-mini-2024-07-18\.ft-/);
      // The job was created only once the file was processed, with the hyperparameters top-level.
      const [request] = hosted.fake.state.jobRequests;
      expect(hosted.fake.state.jobRequests).toHaveLength(1);
      expect(request.body).toMatchObject({ training_file: remote.training_file, suffix: 'hosted-run', hyperparameters: { n_epochs: 2 } });
      expect(request.body).not.toHaveProperty('method');
      expect(hosted.fake.state.files.get(remote.training_file)?.content.toString()).toBe(dataset());
    },
  },
  refused: [
    ['another resource in gateway_options', { gateway_options: { 'x-gateway-azure-resource-name': 'other-aoai' } }, { code: 'setting_not_overridable' }],
  ],
  failures: [
    [
      'for a base model Azure cannot fine-tune',
      { model: 'gpt-4-0613' },
      { code: 'invalidPayload', message: expect.stringMatching(/^Azure OpenAI: .* does not support fine-tuning/) },
    ],
  ],
  cancel: {
    // Every read of a hosted job fails from now on, so the job stays where the submission left it.
    hold: (fake) => fake.failNext('GET', `/${AZURE_TEST_RESOURCE}/openai/fine_tuning/jobs/`, 503, { times: 1_000_000 }),
    stopped: (remote) => expect(remote.status).toBe('cancelled'),
  },
});

it('refuses at upload a file Azure would refuse: nothing reaches Azure', async () => {
  // Valid for the gateway (OpenAI's rules), but the fake Azure refuses a line without an assistant reply it can learn from.
  const bad = dataset().replace('"role":"assistant","content":"Answer 3"', '"role":"user","content":"Answer 3"');
  const file = await hosted.client.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch(() => null);
  // The gateway's own validation refuses it first: nothing reaches Azure.
  expect(file).toBeNull();
  expect([...hosted.fake.state.files.values()].some((f) => f.content.toString() === bad)).toBe(false);
});
