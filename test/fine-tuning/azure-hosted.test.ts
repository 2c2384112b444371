/**
 * A hosted job on an `azure-openai` integration, end to end through the job monitor against the fake
 * Azure OpenAI: the dataset is uploaded to the resource, the monitor waits until Azure has processed
 * it before creating the job (hyperparameters top-level, as the 2024-10-21 API wants), follows
 * `pending → running → succeeded` and records Azure's `fine_tuned_model`.
 */
import { toFile } from 'openai';
import { AZURE_TEST_API_KEY, AZURE_TEST_RESOURCE, startFakeAzureOpenAI } from '../fakes/azure-openai-server';
import { hostedOnFake } from '../support/hosted-kit';
import { dataset } from './harness';

const hosted = hostedOnFake({
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
});

it('runs a hosted job on Azure OpenAI to succeeded with Azure fine_tuned_model', async () => {
  const created = await hosted.createJob({ suffix: 'azure', method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } } });
  expect(created).toMatchObject({ status: 'validating_files', training_file: hosted.trainingFileId });
  const done = await hosted.waitForStatus(created.id, ['succeeded', 'failed']);
  expect(done).toMatchObject({ status: 'succeeded', fine_tuned_model: expect.stringMatching(/^gpt-4o-mini-2024-07-18\.ft-/) });

  // The job was created only once the file was processed, with the hyperparameters top-level.
  const [request] = hosted.fake.state.jobRequests;
  expect(hosted.fake.state.jobRequests).toHaveLength(1);
  expect(request.body).toMatchObject({ training_file: expect.stringMatching(/^file-/), suffix: 'azure', hyperparameters: { n_epochs: 2 } });
  expect(request.body).not.toHaveProperty('method');
  expect(hosted.fake.state.files.get(request.body.training_file as string)?.content.toString()).toBe(dataset());

  expect(await hosted.messagesOf(created.id)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^Uploaded training file to azure-openai/), expect.stringMatching(/^Submitted to azure-openai/)]),
  );
  expect((await hosted.client.fineTuning.jobs.checkpoints.list(created.id)).data.length).toBeGreaterThan(0);
});

it('fails the job with Azure’s reason when Azure refuses the uploaded file', async () => {
  // Valid for the gateway (OpenAI's rules), but the fake Azure refuses a line without an assistant reply it can learn from.
  const bad = dataset().replace('"role":"assistant","content":"Answer 3"', '"role":"user","content":"Answer 3"');
  const file = await hosted.client.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch(() => null);
  // The gateway's own validation refuses it first: nothing reaches Azure.
  expect(file).toBeNull();
  expect([...hosted.fake.state.files.values()].some((f) => f.content.toString() === bad)).toBe(false);
});
