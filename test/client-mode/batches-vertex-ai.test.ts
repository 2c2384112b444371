/**
 * Client-mode batches with Vertex AI on the client-mode batch contract
 * (test/support/client-batch-kit.ts), against the fake Google Cloud: the caller's OpenAI file in
 * Cloud Storage, its GenerateContentRequest lines beside it, a batchPredictionJob whose resource name
 * is the batch's handle. Here what is Vertex's own: the job's labels and model, another project's or
 * location's job refused, a tuned model run by its model resource.
 */
import { toFile } from 'openai';
import { startFakeVertex } from '../fakes/vertex-server';
import { BUCKET, fakeEndpoints, tunedOnFake, vertexHeaders } from '../providers/vertex-ai.support';
import { batchFile, clientBatchContract } from '../support/client-batch-kit';
import { clientSdk } from '../support/client-mode-kit';
import { gatewayOnFake } from '../support/gateway';

const MODEL = 'gemini-2.5-flash';

const on = gatewayOnFake(() => startFakeVertex(), fakeEndpoints);

const objects = () => on.fake.state.storage.buckets.get(BUCKET)!;

describe('client-mode batches with Vertex AI', () => {
  clientBatchContract({
    gw: () => on.gw,
    provider: 'vertex-ai',
    headers: () => ({ 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake) }),
    seen: () => on.fake.state.requests.length,
    model: MODEL,
    failRequests: (ids) => on.fake.batch.refuseRows((line) => ids.includes(String(line.custom_id))),
    secrets: () => [on.fake.serviceAccount.private_key],
    logs: () => on.logs,
    hostile: [
      ['x-gateway-vertex-region', 'us-central1.evil.com'],
      ['x-gateway-vertex-project-id', 'proj/../../x'],
      ['x-gateway-vertex-storage-bucket-name', 'bucket/../x'],
    ],
    // Another location's job: the settings' location is the only one a call goes to.
    foreignHandle: `projects/${'other-project'}/locations/europe-west4/batchPredictionJobs/123`,
    expire: (handle) => void on.fake.batch.expire(handle),
    fail: (handle) => on.fake.batch.fail(handle),
    cancelled: ['cancelling', 'cancelled'],
    after: ({ done }) => {
      const upload = [...objects().keys()].find(
        (name) => name.startsWith('gateway-files/') && objects().get(name)!.data.toString('utf8') === batchFile(MODEL),
      )!;
      const job = [...on.fake.batch.jobs.values()].find((j) => j.inputConfig.gcsSource.uris[0].startsWith(`gs://${BUCKET}/${upload}.batches/`))!;
      expect(job).toMatchObject({ model: `publishers/google/models/${MODEL}`, labels: { gateway_cbatch: expect.any(String) } });
      expect(done.model).toBe(MODEL);
      expect(JSON.stringify(done)).not.toMatch(/gs:\/\/|projects\//);
    },
  });

  it('runs a tuned model by its projects/…/models/… resource (a defect of other gateways: tuned models excluded)', async () => {
    const tunedModel = await tunedOnFake(on.fake);

    on.fake.batch.refuseRows(() => false);
    const sdk = clientSdk(on.gw, { 'x-gateway-provider': 'vertex-ai', ...vertexHeaders(on.fake) });
    const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(batchFile(tunedModel)), 'tuned.jsonl'), purpose: 'batch' });
    const created = await sdk.batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let done = await sdk.batches.retrieve(created.id);
    for (let i = 0; i < 10 && done.status !== 'completed'; i++) done = await sdk.batches.retrieve(created.id);
    expect(done).toMatchObject({ status: 'completed', model: tunedModel, request_counts: { total: 4, completed: 4, failed: 0 } });
    const job = [...on.fake.batch.jobs.values()].find((j) => j.labels?.gateway_cbatch && j.model === tunedModel);
    expect(job).toBeDefined();
    const lines = (await (await sdk.files.content(done.output_file_id!)).text()).trim().split('\n');
    expect(lines).toHaveLength(4);
  });
});
