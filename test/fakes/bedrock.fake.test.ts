/**
 * The fake Bedrock (S3, control plane, runtime) driven by the official AWS SDK v3 clients, to prove it
 * speaks the real wire protocol: SigV4 (recomputed by the fake), S3 XML and checksums, multipart
 * uploads, restJson1 jobs through their lifecycle, Converse and the ConverseStream event stream.
 */
import { createHash, createHmac, type BinaryLike } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  BedrockClient,
  CreateCustomModelDeploymentCommand,
  CreateModelCustomizationJobCommand,
  CreateModelInvocationJobCommand,
  CreateProvisionedModelThroughputCommand,
  GetCustomModelDeploymentCommand,
  GetModelCustomizationJobCommand,
  GetModelInvocationJobCommand,
  GetProvisionedModelThroughputCommand,
  ListModelCustomizationJobsCommand,
  ListModelInvocationJobsCommand,
  StopModelCustomizationJobCommand,
  StopModelInvocationJobCommand,
  type CreateModelCustomizationJobCommandInput,
  type CreateModelInvocationJobCommandInput,
} from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { SignatureV4 } from '@smithy/signature-v4';
import { DEFAULT_BUCKET, startFakeBedrock, type FakeBedrock, type FakeBedrockOptions } from './bedrock-server';
import { MIN_PART_SIZE } from './s3-server';
import type { AwsCredentials } from './sigv4';

// The SDK warns once per process that its 2027 releases will need Node 22; irrelevant to these tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/BedrockFineTuning';
const NOVA = 'amazon.nova-micro-v1:0:128k';
const TRAINING_KEY = 'datasets/train.jsonl';
const UNKNOWN_KEY: AwsCredentials = { accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: 'whatever' };

/** One Nova (Converse-format) training record per line. */
const novaDataset = (lines: number) =>
  Array.from({ length: lines }, (_, i) =>
    JSON.stringify({
      schemaVersion: 'bedrock-conversation-2024',
      system: [{ text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ text: `Question ${i}?` }] },
        { role: 'assistant', content: [{ text: `Answer ${i}.` }] },
      ],
    }),
  ).join('\n') + '\n';

let fake: FakeBedrock;
let clients: Array<{ destroy(): void }> = [];

async function start(options: FakeBedrockOptions = {}) {
  fake = await startFakeBedrock(options);
}

afterEach(async () => {
  clients.forEach((c) => c.destroy());
  clients = [];
  await fake?.close();
});

interface ClientOverrides {
  credentials?: AwsCredentials;
  region?: string;
  systemClockOffset?: number;
}

/** SDK clients against the fake, with the fake's region and credentials unless told otherwise, and no retries. */
function config(endpoint: string, overrides: ClientOverrides) {
  return { region: fake.region, credentials: fake.credentials, ...overrides, endpoint, maxAttempts: 1 };
}
function s3Client(overrides: ClientOverrides = {}) {
  const client = new S3Client({ ...config(fake.s3.url, overrides), forcePathStyle: true });
  clients.push(client);
  return client;
}
function bedrockClient(overrides: ClientOverrides = {}) {
  const client = new BedrockClient(config(fake.control.url, overrides));
  clients.push(client);
  return client;
}
function runtimeClient(overrides: ClientOverrides = {}) {
  const client = new BedrockRuntimeClient(config(fake.runtime.url, overrides));
  clients.push(client);
  return client;
}

/** The rejection of `promise`, for asserting on an SDK error's name, status and message. */
async function failure(promise: Promise<unknown>): Promise<{ name: string; message: string; $metadata: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (e) {
    return e as { name: string; message: string; $metadata: { httpStatusCode?: number } };
  }
  throw new Error('expected the call to fail');
}

/** A SHA-256 (or HMAC-SHA256 with a secret) for @smithy/signature-v4, from node:crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: unknown) {
    this.hash = secret ? createHmac('sha256', secret as BinaryLike) : createHash('sha256');
  }
  update(data: Uint8Array) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

/** The SDK's own signer, configured as a hand-written client would (S3 signs the path as sent, other services re-encode it). */
const signer = (service: 's3' | 'bedrock') =>
  new SignatureV4({ service, region: fake.region, credentials: fake.credentials, sha256: Sha256, uriEscapePath: service !== 's3' });

/** The headers of a request signed by @smithy/signature-v4, for fetch (which sets `host` itself); `host` stays unsigned when told. */
async function signedHeaders(
  service: 's3' | 'bedrock',
  url: URL,
  method: string,
  options: { headers?: Record<string, string>; body?: string; signingDate?: Date; signHost?: boolean } = {},
): Promise<Record<string, string>> {
  const host: Record<string, string> = options.signHost === false ? {} : { host: url.host };
  const request = { method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, body: options.body };
  const signed = await signer(service).sign({ ...request, headers: { ...host, ...options.headers } }, { signingDate: options.signingDate });
  const { host: _host, ...headers } = signed.headers;
  return headers;
}

describe('S3', () => {
  beforeEach(() => start());

  it('stores exact bytes and serves put, get (ranged), head, list and delete as the SDK expects', async () => {
    const s3 = s3Client();
    const key = 'dir/ünïcode key+(1).jsonl';
    const bytes = Buffer.from('{"a":1}\n{"b":2}\n');
    await s3.send(new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key, Body: bytes, ContentType: 'application/jsonl', Metadata: { origin: 'test' } }));
    expect(fake.s3.getObject(DEFAULT_BUCKET, key)).toEqual(bytes);
    // The SDK sent a CRC32 flexible checksum, which the fake recomputed.
    expect(fake.s3.state.buckets.get(DEFAULT_BUCKET)!.get(key)!.checksum?.algorithm).toBe('crc32');

    const got = await s3.send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key }));
    expect(Buffer.from(await got.Body!.transformToByteArray())).toEqual(bytes);
    expect(got.ContentType).toBe('application/jsonl');
    expect(got.Metadata).toEqual({ origin: 'test' });
    expect(got.ETag).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);

    const ranged = await s3.send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key, Range: 'bytes=8-' }));
    expect(await ranged.Body!.transformToString()).toBe('{"b":2}\n');
    expect(ranged.ContentRange).toBe(`bytes 8-15/${bytes.length}`);

    const head = await s3.send(new HeadObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key }));
    expect(head.ContentLength).toBe(bytes.length);

    await s3.send(new DeleteObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key }));
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key })))).name).toBe('NoSuchKey');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key })))).$metadata.httpStatusCode).toBe(404);
  });

  it('lists with prefix, start-after, delimiter and max-keys pages joined by continuation tokens', async () => {
    const s3 = s3Client();
    for (const key of ['a/1', 'a/2', 'a/3', 'a/sub/4', 'b/5']) fake.s3.putObject(DEFAULT_BUCKET, key, key);

    const keys: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      pages++;
      const page = await s3.send(new ListObjectsV2Command({ Bucket: DEFAULT_BUCKET, Prefix: 'a/', MaxKeys: 2, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((c) => c.Key!));
      expect(page.KeyCount).toBe(page.Contents?.length);
      token = page.NextContinuationToken;
      expect(page.IsTruncated).toBe(token !== undefined);
    } while (token);
    expect(keys).toEqual(['a/1', 'a/2', 'a/3', 'a/sub/4']);
    expect(pages).toBe(2);

    const after = await s3.send(new ListObjectsV2Command({ Bucket: DEFAULT_BUCKET, StartAfter: 'a/2' }));
    expect(after.Contents!.map((c) => c.Key)).toEqual(['a/3', 'a/sub/4', 'b/5']);
    const grouped = await s3.send(new ListObjectsV2Command({ Bucket: DEFAULT_BUCKET, Prefix: 'a/', Delimiter: '/' }));
    expect(grouped.Contents!.map((c) => c.Key)).toEqual(['a/1', 'a/2', 'a/3']);
    expect(grouped.CommonPrefixes!.map((p) => p.Prefix)).toEqual(['a/sub/']);
    expect(grouped.Contents![0].Size).toBe(3);

    const bad = await failure(s3.send(new ListObjectsV2Command({ Bucket: DEFAULT_BUCKET, ContinuationToken: 'not-a-token' })));
    expect(bad.name).toBe('InvalidArgument');
  });

  it('decodes an aws-chunked streaming upload (unsigned payload with a CRC32 trailer) to the exact bytes', async () => {
    const s3 = s3Client();
    const pieces = [Buffer.from('first line\n'), Buffer.from('second líne\n')];
    const total = Buffer.concat(pieces);
    await s3.send(new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'streamed.jsonl', Body: Readable.from(pieces), ContentLength: total.length }));
    const put = fake.s3.state.requests.find((r) => r.method === 'PUT')!;
    expect(put.headers['content-encoding']).toBe('aws-chunked');
    expect(put.headers['x-amz-content-sha256']).toBe('STREAMING-UNSIGNED-PAYLOAD-TRAILER');
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'streamed.jsonl')).toEqual(total);
  });

  it('assembles an lib-storage Upload of ~12 MB from parts of at least 5 MiB', async () => {
    const s3 = s3Client();
    const bytes = Buffer.alloc(12 * 1024 * 1024 + 12345);
    for (let i = 0; i < bytes.length; i += 4096) bytes.writeUInt32BE(i, i);
    const params = { Bucket: DEFAULT_BUCKET, Key: 'big/train.jsonl', Body: Readable.from([bytes]) };
    await new Upload({ client: s3, params, partSize: MIN_PART_SIZE, queueSize: 3 }).done();

    expect(fake.s3.getObject(DEFAULT_BUCKET, 'big/train.jsonl')!.equals(bytes)).toBe(true);
    expect(fake.s3.state.completedUploads).toEqual([
      {
        bucket: DEFAULT_BUCKET,
        key: 'big/train.jsonl',
        uploadId: expect.any(String),
        partSizes: [MIN_PART_SIZE, MIN_PART_SIZE, bytes.length - 2 * MIN_PART_SIZE],
      },
    ]);
    expect(fake.s3.state.peakConcurrentParts).toBeGreaterThan(1); // queueSize 3: parts go up in parallel
    expect(fake.s3.state.uploads.size).toBe(0);
    expect(fake.s3.state.buckets.get(DEFAULT_BUCKET)!.get('big/train.jsonl')!.etag).toMatch(/^"[0-9a-f]{32}-3"$/);
  });

  it('refuses to complete a multipart upload whose non-final part is under 5 MiB, and aborts it', async () => {
    const s3 = s3Client();
    const target = { Bucket: DEFAULT_BUCKET, Key: 'small-parts.jsonl' };
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand(target));
    const parts = [];
    for (const [i, body] of ['x'.repeat(1024 * 1024), 'tail'].entries()) {
      const { ETag } = await s3.send(new UploadPartCommand({ ...target, UploadId, PartNumber: i + 1, Body: body }));
      parts.push({ ETag, PartNumber: i + 1 });
    }
    expect(fake.s3.state.uploads.get(UploadId!)!.parts.size).toBe(2);

    const tooSmall = await failure(s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: parts } })));
    expect(tooSmall.name).toBe('EntityTooSmall');
    expect(tooSmall.$metadata.httpStatusCode).toBe(400);
    expect(fake.s3.getObject(DEFAULT_BUCKET, target.Key)).toBeUndefined();

    await s3.send(new AbortMultipartUploadCommand({ ...target, UploadId }));
    expect(fake.s3.state.uploads.size).toBe(0);
    expect((await failure(s3.send(new AbortMultipartUploadCommand({ ...target, UploadId })))).name).toBe('NoSuchUpload');
  });

  it('answers NoSuchBucket for an unknown bucket', async () => {
    const error = await failure(s3Client().send(new PutObjectCommand({ Bucket: 'no-such-bucket', Key: 'k', Body: 'x' })));
    expect(error.name).toBe('NoSuchBucket');
    expect(error.$metadata.httpStatusCode).toBe(404);
  });

  it('rejects a wrong secret (SignatureDoesNotMatch) and an unknown key (InvalidAccessKeyId), counting both', async () => {
    const put = new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'k', Body: 'x' });
    const wrongSecret = await failure(s3Client({ credentials: { ...fake.credentials, secretAccessKey: 'not-the-secret' } }).send(put));
    expect(wrongSecret.name).toBe('SignatureDoesNotMatch');
    expect(wrongSecret.$metadata.httpStatusCode).toBe(403);
    const unknownKey = await failure(s3Client({ credentials: UNKNOWN_KEY }).send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'k' })));
    expect(unknownKey.name).toBe('InvalidAccessKeyId');
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'k')).toBeUndefined();
    expect(fake.state.sigv4.s3.failures.map((f) => f.error)).toEqual(['SignatureDoesNotMatch', 'InvalidAccessKeyId']);
    expect(fake.state.sigv4.s3.verified).toBe(0);

    await s3Client().send(put);
    expect(fake.state.sigv4.s3.verified).toBe(1);
  });

  /** A PUT sent with fetch, its body in aws-chunked chunks each signed after the request's signature. */
  async function putSignedChunks(key: string, chunks: Buffer[], options: { tamper?: boolean; decodedLength?: number } = {}) {
    const url = new URL(`${fake.s3.url}/${DEFAULT_BUCKET}/${encodeURIComponent(key)}`);
    const signingDate = new Date();
    const headers = await signedHeaders('s3', url, 'PUT', {
      headers: {
        'content-encoding': 'aws-chunked',
        'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        'x-amz-decoded-content-length': String(options.decodedLength ?? chunks.reduce((n, c) => n + c.length, 0)),
      },
      signingDate,
    });
    // Each chunk signs the previous signature and its own hash (AWS: "Signature calculation: transfer payload in multiple chunks").
    const scope = `${headers['x-amz-date'].slice(0, 8)}/${fake.region}/s3/aws4_request`;
    let previous = /Signature=([0-9a-f]{64})/.exec(headers.authorization)![1];
    const encoded: Buffer[] = [];
    for (const chunk of [...chunks, Buffer.alloc(0)]) {
      const hashes = [createHash('sha256').digest('hex'), createHash('sha256').update(chunk).digest('hex')];
      const signature = await signer('s3').sign(['AWS4-HMAC-SHA256-PAYLOAD', headers['x-amz-date'], scope, previous, ...hashes].join('\n'), { signingDate });
      const data = options.tamper ? Buffer.from(chunk.toString().toUpperCase()) : chunk;
      encoded.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${signature}\r\n`), data, Buffer.from('\r\n'));
      previous = signature;
    }
    return fetch(url, { method: 'PUT', headers, body: Buffer.concat(encoded) });
  }

  it('verifies the chained chunk signatures of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload', async () => {
    const chunks = [Buffer.from('a'.repeat(8192)), Buffer.from('tail\n')];
    const ok = await putSignedChunks('signed.txt', chunks);
    expect(ok.status).toBe(200);
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'signed.txt')).toEqual(Buffer.concat(chunks));

    const tampered = await putSignedChunks('tampered.txt', chunks, { tamper: true });
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const shortened = await putSignedChunks('short.txt', chunks, { decodedLength: 100 });
    expect(shortened.status).toBe(400);
    expect(await shortened.text()).toContain('<Code>IncompleteBody</Code>');
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'tampered.txt')).toBeUndefined();
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'short.txt')).toBeUndefined();
  });

  it('checks the payload hash, the checksum and that every x-amz-* header is signed', async () => {
    const url = new URL(`${fake.s3.url}/${DEFAULT_BUCKET}/checked.txt`);
    const body = 'exact bytes';
    const hash = createHash('sha256').update(body).digest('hex');
    const headers = await signedHeaders('s3', url, 'PUT', { headers: { 'x-amz-content-sha256': hash }, body });
    const wrongHash = await fetch(url, { method: 'PUT', headers, body: 'other bytes' });
    expect(wrongHash.status).toBe(400);
    expect(await wrongHash.text()).toContain('<Code>XAmzContentSHA256Mismatch</Code>');

    const notSigned = await fetch(url, { method: 'PUT', headers: { ...headers, 'x-amz-meta-added': 'later' }, body });
    expect(notSigned.status).toBe(403);
    expect(await notSigned.text()).toMatch(/<Code>AccessDenied<\/Code>.*<HeadersNotSigned>x-amz-meta-added<\/HeadersNotSigned>/);

    const wrongCrc = new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'checked.txt', Body: body, ChecksumCRC32: 'AAAAAA==' });
    const badChecksum = await failure(s3Client().send(wrongCrc));
    expect(badChecksum.name).toBe('BadDigest');
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'checked.txt')).toBeUndefined();
  });

  it('injects failures in S3 error XML', async () => {
    fake.s3.failNext('PUT', `/${DEFAULT_BUCKET}/`, 503);
    const error = await failure(s3Client().send(new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'k', Body: 'x' })));
    expect(error.name).toBe('SlowDown');
    expect(error.$metadata.httpStatusCode).toBe(503);
  });
});

describe('control plane', () => {
  beforeEach(async () => {
    await start();
    fake.s3.putObject(DEFAULT_BUCKET, TRAINING_KEY, novaDataset(20));
    fake.s3.putObject(DEFAULT_BUCKET, 'datasets/validation.jsonl', novaDataset(4));
  });

  const trainingUri = `s3://${DEFAULT_BUCKET}/${TRAINING_KEY}`;

  const jobInput = (overrides: Partial<CreateModelCustomizationJobCommandInput> = {}): CreateModelCustomizationJobCommandInput => ({
    jobName: 'nova-ft-1',
    customModelName: 'nova-ft-model',
    roleArn: ROLE_ARN,
    baseModelIdentifier: NOVA,
    customizationType: 'FINE_TUNING',
    trainingDataConfig: { s3Uri: trainingUri },
    validationDataConfig: { validators: [{ s3Uri: `s3://${DEFAULT_BUCKET}/datasets/validation.jsonl` }] },
    outputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/outputs/` },
    hyperParameters: { epochCount: '2', batchSize: '8', learningRate: '0.00001' },
    ...overrides,
  });

  it('creates a job (201) and walks it through statusDetails to Completed, writing the metrics CSVs', async () => {
    const bedrock = bedrockClient();
    const created = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput()));
    expect(created.$metadata.httpStatusCode).toBe(201);
    expect(created.jobArn).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:model-customization-job\/amazon\.nova-micro-v1:0:128k\/[a-z0-9]{12}$/);
    expect(fake.state.createJobRequests[0]).toMatchObject({ hyperParameters: { epochCount: '2' }, clientRequestToken: expect.any(String) });

    const seen: string[] = [];
    let job = await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: created.jobArn }));
    for (let polls = 0; job.status === 'InProgress' && polls < 10; polls++) {
      const d = job.statusDetails!;
      seen.push(`${d.validationDetails!.status}/${d.dataProcessingDetails!.status}/${d.trainingDetails!.status}`);
      job = await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: created.jobArn }));
    }
    expect(seen).toEqual(['Completed/InProgress/NotStarted', 'Completed/Completed/InProgress']);
    expect(job.status).toBe('Completed');
    expect(job.outputModelArn).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:custom-model\/amazon\.nova-micro-v1:0:128k\/[a-z0-9]{12}$/);
    expect(job.endTime).toBeInstanceOf(Date);
    expect(job.creationTime!.getTime()).toBeLessThanOrEqual(job.endTime!.getTime());
    expect(job.baseModelArn).toBe(`arn:aws:bedrock:us-east-1::foundation-model/${NOVA}`);
    expect(job.trainingMetrics!.trainingLoss).toBeGreaterThan(0);
    expect(job.validationMetrics).toEqual([{ validationLoss: expect.any(Number) }]);
    expect(job.hyperParameters).toEqual({ epochCount: '2', batchSize: '8', learningRate: '0.00001' });

    // The step-wise metrics land under the output prefix, readable with the S3 client.
    const folder = `outputs/model-customization-job-${created.jobArn!.split('/').pop()}`;
    const csv = await s3Client().send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: `${folder}/training_artifacts/step_wise_training_metrics.csv` }));
    const rows = (await csv.Body!.transformToString()).trim().split('\n');
    expect(rows[0]).toBe('step_number,epoch_number,training_loss,perplexity');
    expect(rows).toHaveLength(1 + 2 * 3); // 2 epochs × ceil(20 examples / batch 8) steps
    expect(rows[1]).toMatch(/^0,0,[\d.]+,[\d.]+$/);
    expect(Number(rows.at(-1)!.split(',')[2])).toBe(job.trainingMetrics!.trainingLoss);
    const validation = fake.s3.getObject(DEFAULT_BUCKET, `${folder}/validation_artifacts/post_fine_tuning_validation/validation_metrics.csv`);
    expect(validation!.toString().split('\n')[0]).toBe('step_number,epoch_number,validation_loss,perplexity');
  });

  it('gets a job by name as well as by its URL-encoded ARN, and answers 404 for an unknown one', async () => {
    const bedrock = bedrockClient();
    const { jobArn } = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput()));
    expect((await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: 'nova-ft-1' }))).jobArn).toBe(jobArn);
    expect((await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: jobArn }))).jobName).toBe('nova-ft-1');
    expect(fake.control.requests.some((r) => r.path === `/model-customization-jobs/${encodeURIComponent(jobArn!)}`)).toBe(true);
    const missing = await failure(bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: 'no-such-job' })));
    expect(missing.name).toBe('ResourceNotFoundException');
    expect(missing.$metadata.httpStatusCode).toBe(404);
  });

  it('is idempotent on clientRequestToken and refuses a duplicate jobName with ConflictException', async () => {
    const bedrock = bedrockClient();
    const first = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ clientRequestToken: 'token-1' })));
    const replay = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ clientRequestToken: 'token-1' })));
    expect(replay.jobArn).toBe(first.jobArn);
    expect(fake.state.jobs.size).toBe(1);
    const duplicate = await failure(bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ clientRequestToken: 'token-2' }))));
    expect(duplicate.name).toBe('ConflictException');
    expect(duplicate.$metadata.httpStatusCode).toBe(400);
  });

  it('lists with maxResults and opaque nextToken pages, filters and sort order', async () => {
    const bedrock = bedrockClient();
    for (const name of ['alpha-1', 'beta-1', 'alpha-2']) await bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ jobName: name })));
    fake.advance('beta-1', 3);

    const names: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await bedrock.send(new ListModelCustomizationJobsCommand({ maxResults: 2, nextToken }));
      names.push(...page.modelCustomizationJobSummaries!.map((s) => s.jobName!));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(names).toEqual(['alpha-2', 'beta-1', 'alpha-1']);

    const ascending = await bedrock.send(new ListModelCustomizationJobsCommand({ sortBy: 'CreationTime', sortOrder: 'Ascending', nameContains: 'alpha' }));
    expect(ascending.modelCustomizationJobSummaries!.map((s) => s.jobName)).toEqual(['alpha-1', 'alpha-2']);
    const completed = await bedrock.send(new ListModelCustomizationJobsCommand({ statusEquals: 'Completed' }));
    const summary = expect.objectContaining({ jobName: 'beta-1', status: 'Completed', customModelArn: expect.any(String) });
    expect(completed.modelCustomizationJobSummaries).toEqual([summary]);
    const before = await bedrock.send(new ListModelCustomizationJobsCommand({ creationTimeBefore: new Date(Date.now() - 60_000) }));
    expect(before.modelCustomizationJobSummaries).toEqual([]);

    expect((await failure(bedrock.send(new ListModelCustomizationJobsCommand({ maxResults: 0 })))).name).toBe('ValidationException');
    expect((await failure(bedrock.send(new ListModelCustomizationJobsCommand({ maxResults: 1001 })))).name).toBe('ValidationException');
    expect((await failure(bedrock.send(new ListModelCustomizationJobsCommand({ nextToken: 'garbage' })))).name).toBe('ValidationException');
  });

  it('stops a job: Stopping, then Stopped at the next GET; a finished job cannot be stopped', async () => {
    const bedrock = bedrockClient();
    const { jobArn } = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput()));
    const stopped = await bedrock.send(new StopModelCustomizationJobCommand({ jobIdentifier: jobArn }));
    expect(stopped.$metadata.httpStatusCode).toBe(200);
    expect(fake.state.jobs.get(jobArn!)!.status).toBe('Stopping');
    const job = await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: jobArn }));
    expect(job.status).toBe('Stopped');
    expect(job.statusDetails!.validationDetails!.status).toBe('Stopped');
    expect(job.endTime).toBeInstanceOf(Date);
    expect(job.outputModelArn).toBeUndefined();
    expect((await failure(bedrock.send(new StopModelCustomizationJobCommand({ jobIdentifier: jobArn })))).name).toBe('ValidationException');
  });

  it('fails a job when told to, and when the dataset does not match the base model format', async () => {
    const bedrock = bedrockClient();
    const { jobArn } = await bedrock.send(new CreateModelCustomizationJobCommand(jobInput()));
    fake.advance(jobArn!);
    fake.failJob(jobArn!, 'Training diverged.');
    const failed = await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: jobArn }));
    expect(failed).toMatchObject({ status: 'Failed', failureMessage: 'Training diverged.' });
    expect(failed.statusDetails!.dataProcessingDetails!.status).toBe('Failed');

    // Titan's prompt/completion records are not Nova's conversation format: validation fails.
    fake.s3.putObject(DEFAULT_BUCKET, 'datasets/titan.jsonl', '{"prompt":"a","completion":"b"}\n');
    const titanInput = jobInput({ jobName: 'wrong-format', trainingDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/datasets/titan.jsonl` } });
    const titanData = await bedrock.send(new CreateModelCustomizationJobCommand(titanInput));
    const invalid = await bedrock.send(new GetModelCustomizationJobCommand({ jobIdentifier: titanData.jobArn }));
    expect(invalid.status).toBe('Failed');
    expect(invalid.failureMessage).toContain('line 1');
    expect(invalid.statusDetails!.validationDetails!.status).toBe('Failed');
  });

  it('validates the request: role ARN pattern, string hyperparameters the model knows, data in S3, required members', async () => {
    const bedrock = bedrockClient();
    const badRole = await failure(bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ roleArn: 'arn:aws:iam::123:user/someone' }))));
    expect(badRole.name).toBe('ValidationException');
    expect(badRole.$metadata.httpStatusCode).toBe(400);
    expect(badRole.message).toContain("at 'roleArn' failed to satisfy constraint: Member must satisfy regular expression pattern");

    const numeric = await failure(bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ hyperParameters: { epochCount: 2 as unknown as string } }))));
    expect(numeric.name).toBe('ValidationException');
    expect(numeric.message).toContain('hyperParameters.epochCount');

    // Nova takes an absolute learningRate, not Claude's learningRateMultiplier.
    const unknownHp = await failure(bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ hyperParameters: { learningRateMultiplier: '1.0' } }))));
    expect(unknownHp.message).toContain('learningRateMultiplier is not supported');

    const missingInput = jobInput({ trainingDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/nothing.jsonl` } });
    const missingData = await failure(bedrock.send(new CreateModelCustomizationJobCommand(missingInput)));
    expect(missingData.name).toBe('ValidationException');

    const badShapes = jobInput({ jobName: 'bad name!', validationDataConfig: { validators: [{ s3Uri: 'https://not-s3' }] } });
    const shapes = await failure(bedrock.send(new CreateModelCustomizationJobCommand(badShapes)));
    expect(shapes.message).toMatch(/^2 validation errors detected: .*'jobName'.*'validationDataConfig\.validators\.1\.member\.s3Uri'/);

    const unknownModel = await failure(bedrock.send(new CreateModelCustomizationJobCommand(jobInput({ baseModelIdentifier: 'amazon.not-a-model-v1:0' }))));
    expect(unknownModel.name).toBe('ValidationException');
    expect(fake.state.jobs.size).toBe(0);
  });

  it('answers signature problems as AWS JSON services do', async () => {
    const list = (client: BedrockClient) => client.send(new ListModelCustomizationJobsCommand({}));
    const wrongSecret = await failure(list(bedrockClient({ credentials: { ...fake.credentials, secretAccessKey: 'wrong' } })));
    expect(wrongSecret.name).toBe('InvalidSignatureException');
    expect(wrongSecret.$metadata.httpStatusCode).toBe(403);
    expect(wrongSecret.message).toContain('The Canonical String for this request should have been');
    expect((await failure(list(bedrockClient({ credentials: UNKNOWN_KEY })))).name).toBe('UnrecognizedClientException');
    const wrongRegion = await failure(list(bedrockClient({ region: 'eu-west-1' })));
    expect(wrongRegion.message).toContain('Credential should be scoped to a valid region');
    const errors = fake.state.sigv4.control.failures.map((f) => f.error);
    expect(errors).toEqual(['InvalidSignatureException', 'UnrecognizedClientException', 'InvalidSignatureException']);
    expect(fake.state.sigv4.control.verified).toBe(0);
  });

  it('rejects a request signed 20 minutes ahead; the SDK then corrects its clock from the Date header', async () => {
    const bedrock = bedrockClient({ systemClockOffset: 20 * 60 * 1000 });
    const skewed = await failure(bedrock.send(new ListModelCustomizationJobsCommand({})));
    expect(skewed.name).toBe('InvalidSignatureException');
    expect(skewed.message).toMatch(/^Signature not yet current: \d{8}T\d{6}Z is still later than \d{8}T\d{6}Z \(\d{8}T\d{6}Z \+ 15 min\.\)$/);
    expect((await bedrock.send(new ListModelCustomizationJobsCommand({}))).modelCustomizationJobSummaries).toEqual([]);
    expect(fake.state.sigv4.control.verified).toBe(1);
  });
});

describe('batch inference (model invocation jobs)', () => {
  beforeEach(() => start());

  const BATCH_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
  const converseRecord = (i: number) => ({
    recordId: `REC${String(i).padStart(8, '0')}`,
    modelInput: { system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: `Question ${i}?` }] }], inferenceConfig: { maxTokens: 50 } },
  });
  const jsonl = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const jobInput = (overrides: Partial<CreateModelInvocationJobCommandInput> = {}): CreateModelInvocationJobCommandInput => ({
    jobName: 'batch-1',
    roleArn: ROLE_ARN,
    modelId: BATCH_MODEL,
    modelInvocationType: 'Converse',
    inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/batch/input/records.jsonl`, s3InputFormat: 'JSONL' } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/batch/output/` } },
    timeoutDurationInHours: 24,
    ...overrides,
  });
  /** Uploads the records with the S3 client, as a caller does. */
  const upload = (key: string, records: unknown[]) => s3Client().send(new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key, Body: jsonl(records) }));
  const readLines = async (key: string) => {
    const object = await s3Client().send(new GetObjectCommand({ Bucket: DEFAULT_BUCKET, Key: key }));
    return (await object.Body!.transformToString())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
  };
  const records = (n: number) => Array.from({ length: n }, (_, i) => converseRecord(i));

  it('runs a Converse job Submitted → Validating → Scheduled → InProgress → Completed, writing {jobId}/<input>.out and the manifest', async () => {
    const bad = { recordId: 'BAD', modelInput: { messages: [] } };
    await upload('batch/input/records.jsonl', [...records(100), bad]);
    const bedrock = bedrockClient();
    const { jobArn } = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ clientRequestToken: 'batch-token-1' })));
    expect(jobArn).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:model-invocation-job\/[a-z0-9]{12}$/);
    const jobId = jobArn!.split('/').pop()!;

    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: i % 2 ? jobId : jobArn }))).status!);
    expect(statuses).toEqual(['Validating', 'Scheduled', 'InProgress', 'Completed', 'Completed']);
    const job = await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: jobArn }));
    expect(job).toMatchObject({ jobName: 'batch-1', modelId: BATCH_MODEL, roleArn: ROLE_ARN, timeoutDurationInHours: 24, modelInvocationType: 'Converse' });
    expect(job.endTime).toBeInstanceOf(Date);
    expect(job.jobExpirationTime!.getTime() - job.submitTime!.getTime()).toBe(24 * 3600_000);

    const lines = await readLines(`batch/output/${jobId}/records.jsonl.out`);
    expect(lines).toHaveLength(101);
    expect(lines[0]).toMatchObject({
      recordId: 'REC00000000',
      modelInput: converseRecord(0).modelInput,
      modelOutput: { output: { message: { role: 'assistant', content: [{ text: expect.any(String) }] } }, stopReason: 'end_turn' },
    });
    expect(lines[100]).toEqual({ recordId: 'BAD', modelInput: bad.modelInput, error: { errorCode: 400, errorMessage: expect.stringContaining('messages') } });
    const [manifest] = await readLines(`batch/output/${jobId}/manifest.json.out`);
    const inputTokens = lines.slice(0, 100).reduce((sum, l) => sum + l.modelOutput.usage.inputTokens, 0);
    expect(manifest).toEqual({
      totalRecordCount: 101,
      processedRecordCount: 101,
      successRecordCount: 100,
      errorRecordCount: 1,
      inputTokenCount: inputTokens,
      outputTokenCount: expect.any(Number),
    });

    // The same clientRequestToken adopts the job; another job of the same name is a conflict.
    const replay = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ clientRequestToken: 'batch-token-1' })));
    expect(replay.jobArn).toBe(jobArn);
    expect((await failure(bedrock.send(new CreateModelInvocationJobCommand(jobInput({ clientRequestToken: 'other' }))))).name).toBe('ConflictException');
    expect((await failure(bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: 'abcdefabcdef' })))).name).toBe('ResourceNotFoundException');
  });

  it('reads every .jsonl of an input folder into one .out each, and runs native InvokeModel bodies (Anthropic Messages)', async () => {
    const anthropic = (i: number) => ({
      recordId: `A${i}`,
      modelInput: { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: `Hello ${i}` }] },
    });
    await upload(
      'batch/in/part-1.jsonl',
      Array.from({ length: 60 }, (_, i) => anthropic(i)),
    );
    await upload(
      'batch/in/part-2.jsonl',
      Array.from({ length: 40 }, (_, i) => anthropic(60 + i)),
    );
    const bedrock = bedrockClient();
    const input = { s3InputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/batch/in/` } };
    const { jobArn } = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ modelInvocationType: undefined, inputDataConfig: input })));
    const job = fake.batch.advance(jobArn!, 4);
    expect(job.status).toBe('Completed');
    const jobId = jobArn!.split('/').pop()!;
    const listed = await s3Client().send(new ListObjectsV2Command({ Bucket: DEFAULT_BUCKET, Prefix: `batch/output/${jobId}/` }));
    expect(listed.Contents!.map((c) => c.Key!.split('/').pop())).toEqual(['manifest.json.out', 'part-1.jsonl.out', 'part-2.jsonl.out']);
    const second = await readLines(`batch/output/${jobId}/part-2.jsonl.out`);
    expect(second).toHaveLength(40);
    expect(second[0]).toMatchObject({
      recordId: 'A60',
      modelOutput: { type: 'message', role: 'assistant', content: [{ type: 'text' }], stop_reason: 'end_turn', usage: { input_tokens: expect.any(Number) } },
    });
  });

  it('fails validation below the record minimum, on a line that is not a record, and on missing input', async () => {
    const bedrock = bedrockClient();
    await upload('batch/input/records.jsonl', records(99));
    const few = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: 'too-few' })));
    expect(fake.batch.advance(few.jobArn!, 2)).toMatchObject({ status: 'Failed', message: expect.stringContaining('minimum number of records') });

    fake.s3.putObject(DEFAULT_BUCKET, 'batch/broken.jsonl', `${jsonl(records(100))}{"recordId":"x"}\n`);
    const broken = await bedrock.send(
      new CreateModelInvocationJobCommand(
        jobInput({ jobName: 'broken', inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/batch/broken.jsonl` } } }),
      ),
    );
    expect(fake.batch.advance(broken.jobArn!, 2)).toMatchObject({ status: 'Failed', message: expect.stringContaining('line 101') });

    const missing = await bedrock.send(
      new CreateModelInvocationJobCommand(
        jobInput({ jobName: 'missing', inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/nothing/` } } }),
      ),
    );
    fake.batch.advance(missing.jobArn!);
    const failed = await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: missing.jobArn }));
    expect(failed).toMatchObject({ status: 'Failed', message: expect.stringContaining('Unable to read the input data') });
    // A job that failed validation writes nothing.
    expect([...fake.s3.state.buckets.get(DEFAULT_BUCKET)!.keys()].filter((k) => k.startsWith('batch/output/'))).toEqual([]);
  });

  it('stops a running job with partial output and a manifest; a timeout expires a queued job and partially completes a running one', async () => {
    await fake.close();
    await start({ batchRecordsPerStep: 30 });
    await upload('batch/input/records.jsonl', records(100));
    const bedrock = bedrockClient();
    const { jobArn } = await bedrock.send(new CreateModelInvocationJobCommand(jobInput()));
    fake.batch.advance(jobArn!, 4);
    await bedrock.send(new StopModelInvocationJobCommand({ jobIdentifier: jobArn }));
    expect((await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: jobArn }))).status).toBe('Stopped');
    const jobId = jobArn!.split('/').pop()!;
    expect(await readLines(`batch/output/${jobId}/records.jsonl.out`)).toHaveLength(30);
    expect((await readLines(`batch/output/${jobId}/manifest.json.out`))[0]).toMatchObject({ totalRecordCount: 100, processedRecordCount: 30 });
    expect((await failure(bedrock.send(new StopModelInvocationJobCommand({ jobIdentifier: jobArn })))).name).toBe('ValidationException');

    const queued = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: 'queued' })));
    expect(fake.batch.timeOut(queued.jobArn!).status).toBe('Expired');
    const running = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: 'running' })));
    fake.batch.advance(running.jobArn!, 5);
    expect(fake.batch.timeOut(running.jobArn!)).toMatchObject({ status: 'PartiallyCompleted', processed: 60 });
    expect((await readLines(`batch/output/${running.jobArn!.split('/').pop()}/manifest.json.out`))[0]).toMatchObject({ processedRecordCount: 60 });
  });

  it('lists jobs page by page with filters, and validates create as the API model does', async () => {
    await upload('batch/input/records.jsonl', records(100));
    const bedrock = bedrockClient();
    for (const name of ['nightly-1', 'adhoc-1', 'nightly-2']) await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: name })));
    const names: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await bedrock.send(new ListModelInvocationJobsCommand({ maxResults: 2, nextToken }));
      names.push(...page.invocationJobSummaries!.map((s) => s.jobName!));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(names).toEqual(['nightly-2', 'adhoc-1', 'nightly-1']);
    const nightly = await bedrock.send(new ListModelInvocationJobsCommand({ nameContains: 'nightly', sortOrder: 'Ascending', statusEquals: 'Submitted' }));
    expect(nightly.invocationJobSummaries!.map((s) => [s.jobName, s.status])).toEqual([
      ['nightly-1', 'Submitted'],
      ['nightly-2', 'Submitted'],
    ]);
    expect((await failure(bedrock.send(new ListModelInvocationJobsCommand({ statusEquals: 'Running' as never })))).name).toBe('ValidationException');

    const refused = async (overrides: Partial<CreateModelInvocationJobCommandInput>) =>
      (await failure(bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: 'refused', ...overrides }))))).message;
    expect(await refused({ timeoutDurationInHours: 12 })).toContain("at 'timeoutDurationInHours' failed to satisfy constraint");
    expect(await refused({ roleArn: 'not-a-role' })).toContain("at 'roleArn'");
    expect(await refused({ modelId: 'arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.nova-micro-v1:0:128k/abcdefabcdef' })).toContain(
      "Batch inference isn't supported",
    );
    expect(await refused({ modelId: 'acme.unknown-v1' })).toContain('model identifier is invalid');
    expect(await refused({ outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://no-such-bucket/out/' } } })).toContain('Unable to access the output');
    // A cross-region inference profile id is accepted.
    const profile = await bedrock.send(new CreateModelInvocationJobCommand(jobInput({ jobName: 'profile', modelId: `us.${BATCH_MODEL}` })));
    expect(profile.jobArn).toBeDefined();
  });
});

describe('session credentials', () => {
  const temporary = { accessKeyId: 'ASIAFAKETEMPORARY001', secretAccessKey: 'temporary-secret', sessionToken: 'session-token-of-the-test' };
  beforeEach(() => start({ credentials: [temporary] }));

  it('requires the session token of temporary credentials', async () => {
    const { sessionToken: _token, ...withoutToken } = temporary;
    const missing = await failure(bedrockClient({ credentials: withoutToken }).send(new ListModelCustomizationJobsCommand({})));
    expect(missing.name).toBe('UnrecognizedClientException');
    const put = new PutObjectCommand({ Bucket: DEFAULT_BUCKET, Key: 'k', Body: 'x' });
    const wrong = await failure(s3Client({ credentials: { ...temporary, sessionToken: 'another-token' } }).send(put));
    expect(wrong.name).toBe('InvalidToken');
    await bedrockClient({ credentials: temporary }).send(new ListModelCustomizationJobsCommand({}));
    await s3Client({ credentials: temporary }).send(put);
    expect(fake.s3.getObject(DEFAULT_BUCKET, 'k')).toEqual(Buffer.from('x'));
  });
});

describe('runtime', () => {
  beforeEach(() => start({ streamDelayMs: 5 }));

  const ask = (modelId: string, text = 'Hello there') => ({
    modelId,
    messages: [{ role: 'user' as const, content: [{ text }] }],
    system: [{ text: 'Be brief.' }],
  });

  it('answers Converse for a foundation model id (over HTTP/2, the client default) with usage and stopReason', async () => {
    const answer = await runtimeClient().send(new ConverseCommand({ ...ask('amazon.nova-micro-v1:0'), inferenceConfig: { maxTokens: 100, temperature: 0.2 } }));
    expect(answer.output!.message).toEqual({ role: 'assistant', content: [{ text: 'Answer from amazon.nova-micro-v1:0: Hello there' }] });
    expect(answer.stopReason).toBe('end_turn');
    expect(answer.usage!.totalTokens).toBe(answer.usage!.inputTokens! + answer.usage!.outputTokens!);
    expect(answer.metrics!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(fake.state.converseCalls[0]).toMatchObject({ modelId: 'amazon.nova-micro-v1:0', stream: false, body: { inferenceConfig: { maxTokens: 100 } } });
    expect(fake.runtime.requests[0].path).toBe('/model/amazon.nova-micro-v1%3A0/converse');
    expect(fake.state.sigv4.runtime.verified).toBe(1);
  });

  it('answers over HTTP/1.1 too: fetch signed with @smithy/signature-v4 (path segments double-encoded)', async () => {
    const url = new URL(`${fake.runtime.url}/model/${encodeURIComponent('anthropic.claude-3-haiku-20240307-v1:0')}/converse`);
    const body = JSON.stringify(ask('ignored'));
    const headers = await signedHeaders('bedrock', url, 'POST', { headers: { 'content-type': 'application/json' }, body });
    const response = await fetch(url, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    const text = 'Answer from anthropic.claude-3-haiku-20240307-v1:0: Hello there';
    expect(await response.json()).toMatchObject({ output: { message: { content: [{ text }] } } });

    const tampered = await fetch(url, { method: 'POST', headers, body: body.replace('Hello', 'Howdy') });
    expect(tampered.status).toBe(403);
    expect(tampered.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
    expect(await tampered.json()).toEqual({ message: expect.stringContaining("'POST\n/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse\n") });
  });

  it('requires a signed host and a credential scope dated like x-amz-date', async () => {
    const url = new URL(`${fake.runtime.url}/model/amazon.nova-micro-v1%3A0/converse`);
    const body = JSON.stringify(ask('ignored'));
    const hostless = await fetch(url, { method: 'POST', headers: await signedHeaders('bedrock', url, 'POST', { body, signHost: false }), body });
    expect(hostless.status).toBe(403);
    expect(hostless.headers.get('x-amzn-errortype')).toBe('IncompleteSignatureException');

    const headers = await signedHeaders('bedrock', url, 'POST', { body });
    const dayBefore = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    const redated = await fetch(url, { method: 'POST', headers: { ...headers, 'x-amz-date': `${dayBefore}${headers['x-amz-date'].slice(8)}` }, body });
    expect(redated.status).toBe(403);
    expect((await redated.json()).message).toContain('Date in Credential scope does not match YYYYMMDD');
    expect(fake.state.converseCalls).toHaveLength(0);
  });

  it('streams ConverseStream as event-stream frames: messageStart, deltas, contentBlockStop, messageStop, metadata', async () => {
    const response = await runtimeClient().send(new ConverseStreamCommand(ask('amazon.nova-lite-v1:0', 'one two three')));
    const events: string[] = [];
    let text = '';
    let usage;
    for await (const event of response.stream!) {
      const [type] = Object.keys(event).filter((k) => k !== '$unknown');
      events.push(type);
      if (event.contentBlockDelta) text += event.contentBlockDelta.delta!.text;
      if (event.metadata) usage = event.metadata.usage;
    }
    expect(text).toBe('Answer from amazon.nova-lite-v1:0: one two three');
    expect(events[0]).toBe('messageStart');
    expect(events.slice(-3)).toEqual(['contentBlockStop', 'messageStop', 'metadata']);
    expect(events.filter((e) => e === 'contentBlockDelta').length).toBe(text.split(' ').length);
    expect(usage).toEqual({ inputTokens: expect.any(Number), outputTokens: expect.any(Number), totalTokens: expect.any(Number) });
    expect(fake.state.abandonedStreams).toBe(0);
  });

  it('counts a stream the client abandoned midway', async () => {
    await fake.close();
    await start({ streamDelayMs: 50 });
    const abort = new AbortController();
    const response = await runtimeClient().send(new ConverseStreamCommand(ask('amazon.nova-lite-v1:0', 'a b c d e f g h')), { abortSignal: abort.signal });
    const iterator = response.stream![Symbol.asyncIterator]();
    expect((await iterator.next()).value).toHaveProperty('messageStart');
    abort.abort();
    for (let i = 0; i < 50 && fake.state.abandonedStreams === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.state.abandonedStreams).toBe(1);
  });

  it('refuses a bare custom model ARN; a deployment or provisioned throughput of it answers once ready', async () => {
    const control = bedrockClient();
    const runtime = runtimeClient();
    fake.s3.putObject(DEFAULT_BUCKET, TRAINING_KEY, novaDataset(3));
    const { jobArn } = await control.send(
      new CreateModelCustomizationJobCommand({
        jobName: 'to-deploy',
        customModelName: 'deployable',
        roleArn: ROLE_ARN,
        baseModelIdentifier: NOVA,
        trainingDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/${TRAINING_KEY}` },
        outputDataConfig: { s3Uri: `s3://${DEFAULT_BUCKET}/out` },
      }),
    );
    const modelArn = fake.advance(jobArn!, 3).outputModelArn!;

    const bare = await failure(runtime.send(new ConverseCommand(ask(modelArn))));
    expect(bare.name).toBe('ValidationException');
    expect(bare.$metadata.httpStatusCode).toBe(400);

    const { customModelDeploymentArn } = await control.send(new CreateCustomModelDeploymentCommand({ modelDeploymentName: 'my-deployment', modelArn }));
    expect(customModelDeploymentArn).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:custom-model-deployment\/[a-z0-9]{12}$/);
    expect((await failure(runtime.send(new ConverseCommand(ask(customModelDeploymentArn!))))).name).toBe('ValidationException');
    const deployment = await control.send(new GetCustomModelDeploymentCommand({ customModelDeploymentIdentifier: customModelDeploymentArn }));
    expect(deployment).toMatchObject({ status: 'Active', modelArn, modelDeploymentName: 'my-deployment' });
    const viaDeployment = await runtime.send(new ConverseCommand(ask(customModelDeploymentArn!)));
    expect(viaDeployment.output!.message!.content![0].text).toBe(`Answer from ${customModelDeploymentArn}: Hello there`);

    const provision = new CreateProvisionedModelThroughputCommand({ provisionedModelName: 'my-pt', modelId: modelArn, modelUnits: 1 });
    const { provisionedModelArn } = await control.send(provision);
    expect((await control.send(new GetProvisionedModelThroughputCommand({ provisionedModelId: provisionedModelArn }))).status).toBe('InService');
    expect((await runtime.send(new ConverseCommand(ask(provisionedModelArn!)))).stopReason).toBe('end_turn');

    const registered = fake.registerDeployment('arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.nova-micro-v1:0:128k/abcdefghijkl');
    expect((await runtime.send(new ConverseCommand(ask(registered)))).output!.message!.role).toBe('assistant');
  });

  it('stops at inferenceConfig.maxTokens with stopReason max_tokens', async () => {
    const runtime = runtimeClient();
    const cut = await runtime.send(new ConverseCommand({ ...ask('amazon.nova-micro-v1:0', 'a long enough question'), inferenceConfig: { maxTokens: 3 } }));
    expect(cut.output!.message!.content![0].text).toBe('Answer from amazon.nova-micro-v1:0: ');
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.usage!.outputTokens).toBe(3);
    const streamed = await runtime.send(new ConverseStreamCommand({ ...ask('amazon.nova-micro-v1:0'), inferenceConfig: { maxTokens: 2 } }));
    const stops = [];
    for await (const event of streamed.stream!) if (event.messageStop) stops.push(event.messageStop.stopReason);
    expect(stops).toEqual(['max_tokens']);
  });

  it('checks the conversation and the model id', async () => {
    const runtime = runtimeClient();
    const assistantFirst = await failure(
      runtime.send(new ConverseCommand({ modelId: 'amazon.nova-micro-v1:0', messages: [{ role: 'assistant', content: [{ text: 'hi' }] }] })),
    );
    expect(assistantFirst.message).toContain('must start with a user message');
    expect((await failure(runtime.send(new ConverseCommand(ask('amazon.unknown-model-v9:0'))))).message).toBe('The provided model identifier is invalid.');
  });

  it('answers an injected 429 with ThrottlingException', async () => {
    fake.runtime.failNext('POST', '/model/', 429);
    const throttled = await failure(runtimeClient().send(new ConverseCommand(ask('amazon.nova-micro-v1:0'))));
    expect(throttled.name).toBe('ThrottlingException');
    expect(throttled.$metadata.httpStatusCode).toBe(429);
    expect(fake.state.converseCalls).toHaveLength(0);
  });
});
