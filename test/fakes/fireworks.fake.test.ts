/**
 * Proves the fake Fireworks speaks Fireworks' wire protocol. Fireworks has no official Node SDK for its
 * control plane, so datasets, uploads and jobs are driven with plain `fetch` exactly as its REST
 * reference documents them; chat goes through the official `openai` client pointed at `/inference/v1`,
 * as Fireworks documents for its OpenAI-compatible API.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { chatExample, chatJsonl } from '../support/factories';
import { startFakeFireworks, type FakeFireworks, type FireworksSftJob } from './fireworks-server';

const KEY = 'fw-test-key-0123456789';
const ACCOUNT = 'acme-labs';
const BASE = 'accounts/fireworks/models/llama-v3p1-8b-instruct';

const jsonl = (count: number) => Buffer.from(chatJsonl(count));

let fake: FakeFireworks;

beforeEach(async () => {
  fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, runningPolls: 2 });
});

afterEach(() => fake.close());

/** A control-plane call under this account; answers status and parsed body. */
async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${fake.origin}/v1/accounts/${ACCOUNT}/${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const createDataset = (id: string) => api('POST', 'datasets', { datasetId: id, dataset: { userUploaded: {} } });

async function uploadDirect(id: string, content: Buffer, filename = 'train.jsonl') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(content)]), filename);
  const res = await fetch(`${fake.origin}/v1/accounts/${ACCOUNT}/datasets/${id}:upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
    body: form,
  });
  return { status: res.status, body: await res.json() };
}

async function readyDataset(id = 'train-set', examples = 4) {
  await createDataset(id);
  await uploadDirect(id, jsonl(examples));
  return `accounts/${ACCOUNT}/datasets/${id}`;
}

async function pollUntil(id: string, done: (job: FireworksSftJob) => boolean) {
  const seen: FireworksSftJob[] = [];
  for (let i = 0; i < 20; i++) {
    const { body } = await api('GET', `supervisedFineTuningJobs/${id}`);
    seen.push(body);
    if (done(body)) return seen;
  }
  throw new Error(`job ${id} never finished: ${seen.map((j) => j.state).join(', ')}`);
}

describe('auth and account scoping', () => {
  test('a missing or wrong key is refused with 401 UNAUTHENTICATED; another account with 403 PERMISSION_DENIED', async () => {
    const noKey = await fetch(`${fake.origin}/v1/accounts/${ACCOUNT}/datasets`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ code: 16, message: expect.any(String), details: [] });

    const other = await fetch(`${fake.origin}/v1/accounts/someone-else/datasets`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(other.status).toBe(403);
    expect((await other.json()).code).toBe(7);
    expect(fake.state.datasets.size).toBe(0);
  });
});

describe('datasets', () => {
  test('create answers an UPLOADING dataset; a duplicate id is ALREADY_EXISTS; a bad id or an unknown field is INVALID_ARGUMENT', async () => {
    const created = await createDataset('my-data-1');
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: `accounts/${ACCOUNT}/datasets/my-data-1`, state: 'UPLOADING', exampleCount: '0', userUploaded: {} });

    const duplicate = await createDataset('my-data-1');
    expect(duplicate).toMatchObject({ status: 409, body: { code: 6, details: [] } });

    const badId = await createDataset('Bad_Id');
    expect(badId).toMatchObject({ status: 400, body: { code: 3 } });

    const unknown = await api('POST', 'datasets', '{"datasetId":"x1","dataset":{},"purpose":"fine-tune"}');
    expect(unknown).toMatchObject({ status: 400, body: { code: 3, message: 'proto: (line 1:32): unknown field "purpose"' } });
  });

  test(':upload (multipart) makes the dataset READY with its example count, format and the exact bytes', async () => {
    await createDataset('direct');
    const content = jsonl(4);
    const uploaded = await uploadDirect('direct', content, 'träin.jsonl');
    expect(uploaded.status).toBe(200);
    expect(uploaded.body).toEqual({
      id: 'direct',
      object: 'file',
      bytes: content.length,
      created_at: expect.any(Number),
      filename: 'träin.jsonl',
      purpose: 'fine-tune',
    });

    const { body } = await api('GET', 'datasets/direct');
    expect(body).toMatchObject({ state: 'READY', exampleCount: '4', format: 'CHAT' });
    expect(fake.state.datasetFiles.get('direct')!.get('träin.jsonl')!.content!.equals(content)).toBe(true);
  });

  test('validation refuses invalid JSONL and fewer than 3 examples, and leaves the dataset UPLOADING', async () => {
    await createDataset('broken');
    const invalid = await uploadDirect('broken', Buffer.from(`${chatExample(1)}\n{not json\n${chatExample(2)}\n`));
    expect(invalid).toMatchObject({ status: 400, body: { code: 3, message: expect.stringContaining('line 2') } });

    const tooFew = await uploadDirect('broken', jsonl(2));
    expect(tooFew).toMatchObject({ status: 400, body: { code: 3, message: expect.stringContaining('at least 3') } });
    expect(fake.state.datasets.get('broken')!.state).toBe('UPLOADING');
  });

  test('signed-URL upload: exact size accepted and validated; wrong size, header or signature refused in Cloud Storage XML', async () => {
    await createDataset('big');
    const content = jsonl(5);
    const endpoint = await api('POST', 'datasets/big:getUploadEndpoint', { filenameToSize: { 'train.jsonl': String(content.length) } });
    expect(endpoint.status).toBe(200);
    const url: string = endpoint.body.filenameToSignedUrls['train.jsonl'];
    expect(url.startsWith(`${fake.origin}/`)).toBe(true);
    expect(new URL(url).searchParams.get('X-Goog-SignedHeaders')).toBe('host;x-goog-content-length-range');

    const put = (body: Buffer, headers: Record<string, string>, target = url) => fetch(target, { method: 'PUT', headers, body: new Uint8Array(body) });
    const octet = { 'content-type': 'application/octet-stream' };

    const short = await put(content.subarray(1), { ...octet, 'x-goog-content-length-range': `${content.length},${content.length}` });
    expect(short.status).toBe(400);
    expect(short.headers.get('content-type')).toContain('application/xml');
    expect(await short.text()).toContain('<Code>EntityTooSmall</Code>');

    const long = await put(Buffer.concat([content, Buffer.from('\n')]), { ...octet, 'x-goog-content-length-range': `${content.length},${content.length}` });
    expect(await long.text()).toContain('<Code>EntityTooLarge</Code>');

    const noHeader = await put(content, octet);
    expect(noHeader.status).toBe(400);
    expect(await noHeader.text()).toContain('<Code>MalformedSecurityHeader</Code>');

    const otherRange = await put(content, { ...octet, 'x-goog-content-length-range': `0,${content.length}` });
    expect(otherRange.status).toBe(403);
    expect(await otherRange.text()).toContain('<Code>SignatureDoesNotMatch</Code>');

    const forged = new URL(url);
    forged.searchParams.set('X-Goog-Signature', 'f'.repeat(64));
    expect((await put(content, { ...octet, 'x-goog-content-length-range': `${content.length},${content.length}` }, forged.toString())).status).toBe(403);

    const tooEarly = await api('POST', 'datasets/big:validateUpload', {});
    expect(tooEarly).toMatchObject({ status: 400, body: { code: 9 } });

    const exact = await put(content, { ...octet, 'x-goog-content-length-range': `${content.length},${content.length}` });
    expect(exact.status).toBe(200);
    expect(exact.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);

    const validated = await api('POST', 'datasets/big:validateUpload', {});
    expect(validated).toMatchObject({ status: 200, body: {} });
    expect((await api('GET', 'datasets/big')).body).toMatchObject({ state: 'READY', exampleCount: '5' });
    expect(fake.state.datasetFiles.get('big')!.get('train.jsonl')).toEqual({ declaredSize: content.length, content, via: 'signedUrl' });
  });

  test('a signed-URL upload larger than the fake keeps is validated as it streams and described by size and digest', async () => {
    await fake.close();
    fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, retainUploadBytes: 100 });
    await createDataset('streamed');
    const content = jsonl(6);
    const endpoint = await api('POST', 'datasets/streamed:getUploadEndpoint', { filenameToSize: { 'train.jsonl': String(content.length) } });
    const headers = { 'content-type': 'application/octet-stream', 'x-goog-content-length-range': `${content.length},${content.length}` };
    const put = await fetch(endpoint.body.filenameToSignedUrls['train.jsonl'], { method: 'PUT', headers, body: new Uint8Array(content) });
    expect(put.status).toBe(200);
    expect(await api('POST', 'datasets/streamed:validateUpload', {})).toMatchObject({ status: 200 });
    expect((await api('GET', 'datasets/streamed')).body).toMatchObject({ state: 'READY', exampleCount: '6' });
    const sha256 = createHash('sha256').update(content).digest('hex');
    const received = { bytes: content.length, sha256 };
    expect(fake.state.datasetFiles.get('streamed')!.get('train.jsonl')).toEqual({ declaredSize: content.length, received, via: 'signedUrl' });
  });

  test(':getDownloadEndpoint answers signed GET URLs serving the uploaded bytes; a forged one is refused', async () => {
    await readyDataset('dl-set', 4);
    const endpoint = await api('GET', 'datasets/dl-set:getDownloadEndpoint');
    expect(endpoint.status).toBe(200);
    const url: string = endpoint.body.filenameToSignedUrls['train.jsonl'];
    expect(new URL(url).searchParams.get('X-Goog-SignedHeaders')).toBe('host');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(jsonl(4))).toBe(true);
    const forged = new URL(url);
    forged.searchParams.set('X-Goog-Signature', 'f'.repeat(64));
    expect((await fetch(forged)).status).toBe(403);
    expect((await api('GET', 'datasets/nope:getDownloadEndpoint')).status).toBe(404);
  });

  test('lists order by createTime when asked (orderBy), by name otherwise; another order is INVALID_ARGUMENT', async () => {
    for (const id of ['b-new', 'a-old']) {
      await createDataset(id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const ids = async (orderBy: string) => {
      const { body } = await api('GET', `datasets?orderBy=${encodeURIComponent(orderBy)}`);
      return body.datasets.map((d: { name: string }) => d.name.split('/').pop());
    };
    expect(await ids('createTime desc')).toEqual(['a-old', 'b-new']);
    expect(await ids('createTime')).toEqual(['b-new', 'a-old']);
    expect(await ids('')).toEqual(['a-old', 'b-new']);
    expect((await api('GET', 'datasets?orderBy=displayName')).status).toBe(400);
  });

  test('list pages by name with an opaque token, an empty token on the last page, and totalSize; delete removes', async () => {
    for (const id of ['c-set', 'a-set', 'b-set']) await createDataset(id);
    const first = await api('GET', 'datasets?pageSize=2');
    expect(first.body.datasets.map((d: { name: string }) => d.name.split('/').pop())).toEqual(['a-set', 'b-set']);
    expect(first.body).toMatchObject({ totalSize: 3, nextPageToken: expect.stringMatching(/.+/) });
    const second = await api('GET', `datasets?pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(second.body).toMatchObject({ datasets: [{ name: `accounts/${ACCOUNT}/datasets/c-set` }], nextPageToken: '' });
    expect((await api('GET', 'datasets?pageToken=garbage')).status).toBe(400);

    expect(await api('DELETE', 'datasets/b-set')).toMatchObject({ status: 200, body: {} });
    expect((await api('GET', 'datasets/b-set')).body).toMatchObject({ code: 5 });
  });

  test('a page holds 50 by default and at most 200, however many are asked for', async () => {
    for (let i = 0; i < 205; i++) await createDataset(`set-${String(i).padStart(3, '0')}`);
    const byDefault = await api('GET', 'datasets');
    expect(byDefault.body.datasets).toHaveLength(50);
    const capped = await api('GET', 'datasets?pageSize=500');
    expect(capped.body.datasets).toHaveLength(200);
    expect(capped.body).toMatchObject({ totalSize: 205, nextPageToken: expect.stringMatching(/.+/) });
  });
});

describe('supervised fine-tuning jobs', () => {
  test('a job advances per GET through VALIDATING and RUNNING (rising percent) to COMPLETED and creates the output model', async () => {
    const dataset = await readyDataset();
    const created = await api('POST', 'supervisedFineTuningJobs?supervisedFineTuningJobId=my-job', {
      dataset,
      baseModel: BASE,
      displayName: 'My tune',
      epochs: '2', // proto3 JSON accepts integers as strings
      learning_rate: 0.0002, // and proto field names as well as JSON names
      outputModel: 'my-tuned-model',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: `accounts/${ACCOUNT}/supervisedFineTuningJobs/my-job`,
      state: 'JOB_STATE_CREATING',
      outputModel: `accounts/${ACCOUNT}/models/my-tuned-model`,
      epochs: 2,
      learningRate: 0.0002,
      completedTime: null,
      jobProgress: null,
    });

    const seen = await pollUntil('my-job', (job) => job.state === 'JOB_STATE_COMPLETED');
    expect(seen.map((j) => j.state)).toEqual([
      'JOB_STATE_VALIDATING',
      'JOB_STATE_RUNNING',
      'JOB_STATE_RUNNING',
      'JOB_STATE_WRITING_RESULTS',
      'JOB_STATE_COMPLETED',
    ]);
    expect(seen.filter((j) => j.state === 'JOB_STATE_RUNNING').map((j) => j.jobProgress!.percent)).toEqual([50, 100]);
    expect(seen.at(-1)!.completedTime).toEqual(expect.any(String));

    const model = await api('GET', 'models/my-tuned-model');
    expect(model.body).toMatchObject({ name: `accounts/${ACCOUNT}/models/my-tuned-model`, state: 'READY', peftDetails: { baseModel: BASE } });
  });

  test('create checks the dataset, base model XOR warm start, and proto3 types and fields', async () => {
    const dataset = await readyDataset();
    await createDataset('pending-set');
    const create = (body: Record<string, unknown>) => api('POST', 'supervisedFineTuningJobs', body);

    expect(await create({ dataset, baseModel: BASE, warmStartFrom: `accounts/${ACCOUNT}/models/x` })).toMatchObject({ status: 400, body: { code: 3 } });
    expect(await create({ dataset })).toMatchObject({ status: 400, body: { code: 3 } });
    expect(await create({ baseModel: BASE })).toMatchObject({ status: 400, body: { code: 3, message: 'dataset is required' } });
    expect(await create({ dataset: `accounts/${ACCOUNT}/datasets/pending-set`, baseModel: BASE })).toMatchObject({ status: 400, body: { code: 9 } });
    expect(await create({ dataset: `accounts/${ACCOUNT}/datasets/nope`, baseModel: BASE })).toMatchObject({ status: 404, body: { code: 5 } });
    expect(await create({ dataset, baseModel: 'accounts/fireworks/models/no-such-model' })).toMatchObject({ status: 404 });

    const badType = await create({ dataset, baseModel: BASE, epochs: 'three' });
    const protojsonWording = /^proto: \(line 1:\d+\): invalid value for int32 field epochs: "three"$/;
    expect(badType).toMatchObject({ status: 400, body: { code: 3, message: expect.stringMatching(protojsonWording) } });
    expect(await create({ dataset, baseModel: BASE, batchSize: 1.5 })).toMatchObject({ status: 400, body: { code: 3 } });
    const unknown = await create({ dataset, baseModel: BASE, n_epochs: 3 });
    expect(unknown).toMatchObject({ status: 400, body: { code: 3, message: expect.stringContaining('unknown field "n_epochs"') } });
    expect(fake.state.jobs.size).toBe(0);
  });

  test('there is no cancel route; DELETE answers {} and the job goes DELETING, then 404', async () => {
    const dataset = await readyDataset();
    const { body: job } = await api('POST', 'supervisedFineTuningJobs', { dataset, baseModel: BASE });
    const id = job.name.split('/').pop();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    expect(await api('POST', `supervisedFineTuningJobs/${id}:cancel`, {})).toMatchObject({ status: 404, body: { code: 5 } });

    expect(await api('DELETE', `supervisedFineTuningJobs/${id}`)).toMatchObject({ status: 200, body: {} });
    expect((await api('GET', `supervisedFineTuningJobs/${id}`)).body.state).toBe('JOB_STATE_DELETING');
    expect((await api('GET', `supervisedFineTuningJobs/${id}`)).status).toBe(404);
  });

  test('failJob forces JOB_STATE_FAILED with a status, and the job stays failed', async () => {
    const dataset = await readyDataset();
    const { body: job } = await api('POST', 'supervisedFineTuningJobs?supervisedFineTuningJobId=doomed', { dataset, baseModel: BASE });
    await api('GET', 'supervisedFineTuningJobs/doomed');
    fake.failJob('doomed', 'out of memory');
    const failed = (await api('GET', 'supervisedFineTuningJobs/doomed')).body;
    expect(failed).toMatchObject({
      name: job.name,
      state: 'JOB_STATE_FAILED',
      status: { code: 'INVALID_ARGUMENT', message: 'out of memory' },
      completedTime: expect.any(String),
    });
    expect((await api('GET', 'supervisedFineTuningJobs/doomed')).body.state).toBe('JOB_STATE_FAILED');
    expect(fake.state.models.size).toBe(0);
  });

  test('list pages jobs with a token and refuses a pageSize that is not a number', async () => {
    const dataset = await readyDataset();
    for (let i = 0; i < 3; i++) await api('POST', `supervisedFineTuningJobs?supervisedFineTuningJobId=job-${i}`, { dataset, baseModel: BASE });
    const all = await api('GET', 'supervisedFineTuningJobs?pageSize=500');
    expect(all.body).toMatchObject({ totalSize: 3, nextPageToken: '' });
    expect(all.body.supervisedFineTuningJobs).toHaveLength(3);
    const first = await api('GET', 'supervisedFineTuningJobs?pageSize=1');
    const second = await api('GET', `supervisedFineTuningJobs?pageSize=1&pageToken=${first.body.nextPageToken}`);
    expect([first, second].map((p) => p.body.supervisedFineTuningJobs[0].name.split('/').pop())).toEqual(['job-0', 'job-1']);
    expect((await api('GET', 'supervisedFineTuningJobs?pageSize=ten')).body).toMatchObject({ code: 3 });
  });
});

describe('batch inference jobs', () => {
  const request = (i: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ custom_id: `req-${i}`, body: { messages: [{ role: 'user', content: `Question ${i}?` }], max_tokens: 30, ...extra } });
  const batchInput = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');
  async function inputDataset(lines: string[], id = 'batch-in') {
    await createDataset(id);
    const upload = await uploadDirect(id, batchInput(lines), 'input.jsonl');
    expect(upload.status).toBe(200);
    return `accounts/${ACCOUNT}/datasets/${id}`;
  }
  const createJob = (body: Record<string, unknown>, id = 'nightly-eval') => api('POST', `batchInferenceJobs?batchInferenceJobId=${id}`, body);
  /** The output dataset's files, fetched through its signed download URLs as a caller does. */
  async function outputFiles(dataset: string) {
    const { body } = await api('GET', `datasets/${dataset.split('/').pop()}:getDownloadEndpoint`);
    const files: Record<string, Array<Record<string, any>>> = {};
    for (const [name, url] of Object.entries(body.filenameToSignedUrls as Record<string, string>)) {
      const text = await (await fetch(url)).text();
      files[name] = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>);
    }
    return files;
  }

  test('runs a job VALIDATING → PENDING → RUNNING → COMPLETED, counting in jobProgress, results and errors in the output dataset', async () => {
    const input = await inputDataset([request(0), request(1), JSON.stringify({ custom_id: 'bad', body: { messages: [] } })]);
    const output = `accounts/${ACCOUNT}/datasets/nightly-out`;
    const created = await createJob({
      displayName: 'Nightly eval',
      model: BASE,
      inputDatasetId: input,
      outputDatasetId: output,
      inferenceParameters: { maxTokens: 64 },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: `accounts/${ACCOUNT}/batchInferenceJobs/nightly-eval`,
      state: 'JOB_STATE_VALIDATING',
      model: BASE,
      inputDatasetId: input,
      outputDatasetId: output,
      inferenceParameters: { maxTokens: 64 },
      jobProgress: { totalInputRequests: 3, totalProcessedRequests: 0 },
    });
    expect((await api('GET', 'datasets/nightly-out')).body.state).toBe('UPLOADING');

    const states: string[] = [];
    for (let i = 0; i < 4; i++) states.push((await api('GET', 'batchInferenceJobs/nightly-eval')).body.state);
    expect(states).toEqual(['JOB_STATE_PENDING', 'JOB_STATE_RUNNING', 'JOB_STATE_COMPLETED', 'JOB_STATE_COMPLETED']);
    const done = (await api('GET', 'batchInferenceJobs/nightly-eval')).body;
    expect(done.jobProgress).toMatchObject({
      percent: 100,
      totalInputRequests: 3,
      totalProcessedRequests: 3,
      successfullyProcessedRequests: 2,
      failedRequests: 1,
      outputRows: 2,
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
    });
    expect((await api('GET', 'datasets/nightly-out')).body).toMatchObject({ state: 'READY', exampleCount: '3' });

    const files = await outputFiles(output);
    expect(files['results.jsonl'].map((l) => l.custom_id)).toEqual(['req-0', 'req-1']);
    expect(files['results.jsonl'][0].response).toMatchObject({ object: 'chat.completion', model: BASE, usage: { total_tokens: expect.any(Number) } });
    expect(files['errors.jsonl']).toEqual([{ custom_id: 'bad', error: { code: 400, message: expect.stringContaining('messages') } }]);
    expect(done.jobProgress.inputTokens).toBe(files['results.jsonl'].reduce((sum, l) => sum + l.response.usage.prompt_tokens, 0));
  });

  test('a second create with the same id is ALREADY_EXISTS (the job is adopted by GET); lists page by page; DELETE removes it', async () => {
    const input = await inputDataset([request(0)]);
    expect((await createJob({ model: BASE, inputDatasetId: input })).status).toBe(200);
    const again = await createJob({ model: BASE, inputDatasetId: input });
    expect([again.status, again.body.code]).toEqual([409, 6]);
    expect((await api('GET', 'batchInferenceJobs/nightly-eval')).body.outputDatasetId).toBe(`accounts/${ACCOUNT}/datasets/nightly-eval-output`);
    await createJob({ model: BASE, inputDatasetId: input }, 'second-job');
    const first = await api('GET', 'batchInferenceJobs?pageSize=1');
    expect(first.body).toMatchObject({ totalSize: 2, nextPageToken: expect.any(String) });
    const second = await api('GET', `batchInferenceJobs?pageSize=1&pageToken=${first.body.nextPageToken}`);
    expect([...first.body.batchInferenceJobs, ...second.body.batchInferenceJobs].map((j: { name: string }) => j.name.split('/').pop())).toEqual([
      'nightly-eval',
      'second-job',
    ]);
    expect((await api('POST', 'batchInferenceJobs/nightly-eval:cancel', {})).status).toBe(404);
    expect((await api('DELETE', 'batchInferenceJobs/nightly-eval')).status).toBe(200);
    expect((await api('GET', 'batchInferenceJobs/nightly-eval')).body.state).toBe('JOB_STATE_DELETING');
    expect((await api('GET', 'batchInferenceJobs/nightly-eval')).status).toBe(404);
  });

  test('expiry and failure keep the rows already answered', async () => {
    await fake.close();
    fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, batchRowsPerStep: 2 });
    const input = await inputDataset([0, 1, 2, 3, 4].map((i) => request(i)));
    await createJob({ model: BASE, inputDatasetId: input });
    for (let i = 0; i < 3; i++) await api('GET', 'batchInferenceJobs/nightly-eval');
    expect(fake.batch.expire('nightly-eval')).toMatchObject({ state: 'JOB_STATE_EXPIRED', jobProgress: { totalProcessedRequests: 2, percent: 40 } });
    expect((await outputFiles(`accounts/${ACCOUNT}/datasets/nightly-eval-output`))['results.jsonl']).toHaveLength(2);

    await createJob({ model: BASE, inputDatasetId: input }, 'doomed');
    fake.batch.fail('doomed', 'out of capacity');
    expect((await api('GET', 'batchInferenceJobs/doomed')).body).toMatchObject({
      state: 'JOB_STATE_FAILED',
      status: { code: 'INTERNAL', message: 'out of capacity' },
    });
  });

  test('refuses what Fireworks refuses: a bad input dataset, a model in the lines, an unknown model, an undeployed LoRA, unknown fields', async () => {
    const bad = await createDataset('bad-batch');
    expect(bad.status).toBe(200);
    const modelInLine = await uploadDirect('bad-batch', batchInput([request(0, { model: BASE })]));
    expect([modelInLine.status, modelInLine.body.message]).toEqual([400, expect.stringContaining('"body.model" is not allowed')]);
    const duplicate = await uploadDirect('bad-batch', batchInput([request(0), request(0)]));
    expect(duplicate.body.message).toContain('line 2: duplicate custom_id');

    const training = await readyDataset('sft-set');
    const notBatch = await createJob({ model: BASE, inputDatasetId: training });
    expect([notBatch.status, notBatch.body.message]).toEqual([400, expect.stringContaining('not batch inference input')]);
    const input = await inputDataset([request(0)]);
    expect((await createJob({ model: 'accounts/fireworks/models/no-such-model', inputDatasetId: input })).status).toBe(404);
    expect((await createJob({ model: `accounts/${ACCOUNT}/models/my-lora`, inputDatasetId: input })).status).toBe(404);
    const unknownField = await createJob({ model: BASE, inputDatasetId: input, priority: 'high' });
    expect([unknownField.status, unknownField.body.message]).toEqual([400, expect.stringContaining('unknown field "priority"')]);
    expect((await createJob({ model: BASE, inputDatasetId: `accounts/${ACCOUNT}/datasets/missing` })).status).toBe(404);
  });
});

describe('inference through the official openai client', () => {
  const client = (apiKey = KEY) => new OpenAI({ apiKey, baseURL: fake.inferenceUrl, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'Say hi' }];

  test('a base model answers a plain completion', async () => {
    const completion = await client().chat.completions.create({ model: BASE, messages });
    expect(completion.choices[0].message.content).toBe(`Answer from ${BASE}: Say hi`);
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);
    expect(fake.state.chatRequests[0]).toMatchObject({ model: BASE, messages });
  });

  test('a stream arrives chunk by chunk, and a client that leaves mid-stream is counted', async () => {
    const pieces: string[] = [];
    for await (const chunk of await client().chat.completions.create({ model: BASE, messages, stream: true, stream_options: { include_usage: true } })) {
      pieces.push(chunk.choices[0]?.delta.content ?? '');
    }
    expect(pieces.filter(Boolean).length).toBeGreaterThan(2);
    expect(pieces.join('')).toBe(`Answer from ${BASE}: Say hi`);
    expect(fake.state.abandonedStreams).toBe(0);

    await fake.close();
    fake = await startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT, streamDelayMs: 50 });
    const stream = await client().chat.completions.create({ model: BASE, messages, stream: true });
    for await (const _chunk of stream) break; // leaves after the first chunk
    for (let i = 0; i < 50 && fake.state.abandonedStreams === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fake.state.abandonedStreams).toBe(1);
  });

  test('a fine-tuned model is 404 NOT_FOUND until deployed, then answers', async () => {
    const dataset = await readyDataset();
    await api('POST', 'supervisedFineTuningJobs?supervisedFineTuningJobId=ft-job', { dataset, baseModel: BASE, outputModel: 'tuned' });
    await pollUntil('ft-job', (job) => job.state === 'JOB_STATE_COMPLETED');
    const tuned = `accounts/${ACCOUNT}/models/tuned`;

    const notDeployed = await client()
      .chat.completions.create({ model: tuned, messages })
      .catch((e: unknown) => e);
    expect(notDeployed).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notDeployed as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual({
      message: 'Model not found, inaccessible, and/or not deployed',
      param: 'model',
      code: 'NOT_FOUND',
      type: 'error',
    });

    const serverless = await api('POST', 'deployedModels', { model: tuned, serverless: true });
    expect(serverless).toMatchObject({ status: 400, body: { code: 3 } });
    const deployed = await api('POST', 'deployedModels', { model: tuned, deployment: `accounts/${ACCOUNT}/deployments/dep-1` });
    expect(deployed.body).toMatchObject({ model: tuned, deployment: `accounts/${ACCOUNT}/deployments/dep-1`, state: 'DEPLOYED', default: true });

    const completion = await client().chat.completions.create({ model: tuned, messages });
    expect(completion.choices[0].message.content).toBe(`Answer from ${tuned}: Say hi`);
  });

  test('deploy() registers a model without the HTTP call', async () => {
    const name = `accounts/${ACCOUNT}/models/imported`;
    await expect(client().chat.completions.create({ model: name, messages })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    fake.deploy(name);
    expect((await client().chat.completions.create({ model: name, messages })).model).toBe(name);
  });

  test('a wrong key is 401 in the inference error shape', async () => {
    const err = await client('wrong')
      .chat.completions.create({ model: BASE, messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('injected failures and delays', () => {
  test('failNext answers in the dialect of the path: gRPC JSON on the control plane, {error} on inference', async () => {
    fake.failNext('GET', `/v1/accounts/${ACCOUNT}/datasets`, 429, { retryAfter: '2' });
    const limited = await api('GET', 'datasets');
    expect(limited).toMatchObject({ status: 429, body: { code: 8, details: [] } });
    expect(limited.headers.get('retry-after')).toBe('2');
    expect((await api('GET', 'datasets')).status).toBe(200);

    fake.failNext('POST', '/inference/v1/chat/completions', 500);
    const err = await new OpenAI({ apiKey: KEY, baseURL: fake.inferenceUrl, maxRetries: 0 }).chat.completions
      .create({ model: BASE, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).error).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
  });

  test('delayNext holds the answer back', async () => {
    fake.delayNext('GET', `/v1/accounts/${ACCOUNT}/datasets`, 150);
    const started = Date.now();
    expect((await api('GET', 'datasets')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});
