/**
 * A hosted job on an `azure-openai` integration, end to end through the job monitor against the fake
 * Azure OpenAI: the dataset is uploaded to the resource, the monitor waits until Azure has processed
 * it before creating the job (hyperparameters top-level, as the 2024-10-21 API wants), follows
 * `pending → running → succeeded` and records Azure's `fine_tuned_model`.
 */
import { toFile } from 'openai';
import { startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure-openai-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAzureIntegration, createTestDatabase, dataset, eventually, newKey, sdk, startHostedGateway, tempDir, type HostedGateway } from './harness';

let azure: FakeAzureOpenAI;
let unusedOpenAI: FakeOpenAI;
let gw: HostedGateway;
let data: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  // Files are processed one poll after upload: the monitor must see them pending first.
  azure = await startFakeAzureOpenAI({ pollsToProcessFile: 2 });
  unusedOpenAI = await startFakeOpenAI();
  data = await tempDir('gw-azure-');
  gw = await startHostedGateway({
    fake: unusedOpenAI,
    database: await createTestDatabase(),
    dataDir: data.dir,
    key: newKey(),
    env: { GATEWAY_AZURE_OPENAI_BASE_URL: azure.baseUrlTemplate },
  });
  await createAzureIntegration(gw, 'my-azure');
});

afterAll(async () => {
  await gw.stop();
  await gw.database.drop();
  await azure.close();
  await unusedOpenAI.close();
  await data.remove();
});

it('runs a hosted job on Azure OpenAI to succeeded with Azure fine_tuned_model', async () => {
  const client = sdk(gw);
  const file = await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
  const created = await client.fineTuning.jobs.create({
    model: 'gpt-4o-mini-2024-07-18',
    training_file: file.id,
    suffix: 'azure',
    method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
    gateway_options: { 'x-gateway-provider': '@my-azure' },
  } as never);
  expect(created).toMatchObject({ status: 'validating_files', training_file: file.id });

  const done = await eventually(async () => {
    const job = await client.fineTuning.jobs.retrieve(created.id);
    return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
  });
  expect(done).toMatchObject({ status: 'succeeded', fine_tuned_model: expect.stringMatching(/^gpt-4o-mini-2024-07-18\.ft-/) });

  // The job was created only once the file was processed, with the hyperparameters top-level.
  const [request] = azure.state.jobRequests;
  expect(azure.state.jobRequests).toHaveLength(1);
  expect(request.body).toMatchObject({ training_file: expect.stringMatching(/^file-/), suffix: 'azure', hyperparameters: { n_epochs: 2 } });
  expect(request.body).not.toHaveProperty('method');
  const uploaded = azure.state.files.get(request.body.training_file as string);
  expect(uploaded?.content.toString()).toBe(dataset());

  const events = (await client.fineTuning.jobs.listEvents(created.id, { limit: 50 })).data.map((e) => e.message);
  expect(events).toEqual(
    expect.arrayContaining([expect.stringMatching(/^Uploaded training file to azure-openai/), expect.stringMatching(/^Submitted to azure-openai/)]),
  );
  expect((await client.fineTuning.jobs.checkpoints.list(created.id)).data.length).toBeGreaterThan(0);
});

it('fails the job with Azure’s reason when Azure refuses the uploaded file', async () => {
  const client = sdk(gw);
  // Valid for the gateway (OpenAI's rules), but the fake Azure refuses a line without an assistant reply it can learn from.
  const bad = dataset().replace('"role":"assistant","content":"Answer 3"', '"role":"user","content":"Answer 3"');
  const file = await client.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'fine-tune' }).catch(() => null);
  // The gateway's own validation refuses it first: nothing reaches Azure.
  expect(file).toBeNull();
  expect([...azure.state.files.values()].some((f) => f.content.toString() === bad)).toBe(false);
});
