/**
 * Client-mode batches with Amazon Bedrock on the client-mode batch contract
 * (test/support/client-batch-kit.ts), against the fake Bedrock (control plane, S3): the caller's
 * OpenAI file in the bucket, its Converse records and the job's output beside it, the job ARN as the
 * batch's handle. Here what is Bedrock's own: the record minimum named in a 400, the files beside
 * the upload, every `.out` object read, a foreign region or bucket refused, the manifest's counts.
 */
import { toFile } from 'openai';
import { DEFAULT_BUCKET, startFakeBedrock } from '../fakes/bedrock-server';
import { awsHeaders, fakeEndpoints, ROLE_ARN } from '../providers/bedrock-harness';
import { batchFile, clientBatchContract, requestIds } from '../support/client-batch-kit';
import { clientSdk } from '../support/client-mode-kit';
import { api, gatewayOnFake } from '../support/gateway';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
/** Bedrock takes no job under 100 records. */
const REQUESTS = 100;

// Each GET of a job moves it one step (Submitted → … → Completed).
const on = gatewayOnFake(() => startFakeBedrock({ stepsPerPoll: 1 }), fakeEndpoints);

const headers = () => ({ 'x-gateway-provider': 'bedrock', ...awsHeaders(on.fake) });
const seen = () => on.fake.control.requests.length + on.fake.s3.state.requests.length;
const keys = () => [...(on.fake.s3.state.buckets.get(DEFAULT_BUCKET)?.keys() ?? [])];

describe('client-mode batches with Amazon Bedrock', () => {
  clientBatchContract({
    gw: () => on.gw,
    provider: 'bedrock',
    headers,
    seen,
    model: MODEL,
    requests: REQUESTS,
    // The kit's request n asks "Question n: …"; Bedrock's record ids are the gateway's, so the fake picks records by their text.
    failRequests: (ids) => on.fake.batch.refuseRecords((input) => ids.some((id) => JSON.stringify(input).includes(`Question ${id.slice('req-'.length)}:`))),
    secrets: () => [on.fake.credentials.secretAccessKey],
    logs: () => on.logs,
    hostile: [
      ['x-gateway-aws-region', 'us-east-1.evil.com'],
      ['x-gateway-aws-s3-bucket', 'bucket/../other'],
    ],
    // Another region's job: the settings' region is the only one a call goes to.
    foreignHandle: `arn:aws:bedrock:eu-west-1:123456789012:model-invocation-job/abcdef123456`,
    // Bedrock's timeout before the job ran: Expired.
    expire: (handle) => void on.fake.batch.timeOut(handle),
    cancelled: ['cancelling', 'cancelled'],
    after: ({ uploaded, done }) => {
      // The caller's file is stored as written; the batch's folder is beside it, Bedrock's output in it.
      const upload = keys().find((k) => k.startsWith('gateway-files/') && k.endsWith('/requests.jsonl'))!;
      expect(on.fake.s3.getObject(DEFAULT_BUCKET, upload)!.toString('utf8')).toBe(batchFile(MODEL, requestIds(REQUESTS)));
      const folder = keys().find((k) => k.startsWith(`${upload}.batches/`) && k.endsWith('/input.jsonl'))!;
      expect(keys().some((k) => k.startsWith(folder.replace('input.jsonl', 'output/')) && k.endsWith('.jsonl.out'))).toBe(true);
      const job = [...on.fake.state.invocationJobs.values()].find((j) => j.inputDataConfig.s3InputDataConfig.s3Uri.endsWith(folder))!;
      expect(job).toMatchObject({ modelId: MODEL, roleArn: ROLE_ARN, modelInvocationType: 'Converse', jobName: expect.stringMatching(/^gateway-cbatch-/) });
      // Nothing of the job's ARN or of s3:// in what the caller sees.
      expect(JSON.stringify([uploaded, done])).not.toMatch(/arn:aws|s3:\/\//);
    },
  });

  it('refuses a file under Bedrock’s record minimum with a 400 naming it, before any job', async () => {
    const sdk = clientSdk(on.gw, headers());
    const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(batchFile(MODEL, requestIds(99))), 'few.jsonl'), purpose: 'batch' });
    const jobs = on.fake.state.invocationJobs.size;
    const res = await api(on.gw, 'POST', '/v1/batches', {
      headers: headers(),
      body: { input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'input_file_id', code: 'invalid_batch_file', message: expect.stringContaining('at least 100') });
    expect(on.fake.state.invocationJobs.size).toBe(jobs);
  });

  it('refuses an input file of another bucket before any connection', async () => {
    const before = seen();
    const res = await api(on.gw, 'POST', '/v1/batches', {
      headers: { ...headers(), 'x-gateway-aws-s3-bucket': 'another-bucket' },
      body: { input_file_id: `s3://${DEFAULT_BUCKET}/gateway-files/x/requests.jsonl`, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(res.status).toBe(400);
    expect(seen()).toBe(before);
  });

  it('reads every .out object of the job, not one guessed name (a defect of other gateways: output ids naming a folder or one file)', async () => {
    const sdk = clientSdk(on.gw, headers());
    const uploaded = await sdk.files.create({ file: await toFile(Buffer.from(batchFile(MODEL, requestIds(REQUESTS))), 'split.jsonl'), purpose: 'batch' });
    on.fake.batch.refuseRecords(() => false);
    const created = await sdk.batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let done = await sdk.batches.retrieve(created.id);
    for (let i = 0; i < 10 && done.status !== 'completed'; i++) done = await sdk.batches.retrieve(created.id);
    expect(done.status).toBe('completed');
    // Bedrock may write several .out objects: the results split in two, as if it had.
    const out = keys().find((k) => k.includes('/split.jsonl.batches/') && k.endsWith('input.jsonl.out'))!;
    const lines = on.fake.s3.getObject(DEFAULT_BUCKET, out)!.toString('utf8').trim().split('\n');
    on.fake.s3.putObject(DEFAULT_BUCKET, out, `${lines.slice(0, 60).join('\n')}\n`, 'application/octet-stream');
    on.fake.s3.putObject(
      DEFAULT_BUCKET,
      out.replace('input.jsonl.out', 'input-part2.jsonl.out'),
      `${lines.slice(60).join('\n')}\n`,
      'application/octet-stream',
    );
    const output = (await (await sdk.files.content(done.output_file_id!)).text()).trim().split('\n');
    expect(new Set(output.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).size).toBe(REQUESTS);
  });
});
