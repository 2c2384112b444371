/**
 * Proves the fake Google Cloud (token endpoint, Cloud Storage, Vertex AI) faithful by driving it with
 * Google's own clients: google-auth-library's JWT client for the token exchange, @google-cloud/storage for
 * objects, @google/genai for tuning jobs and generateContent. Raw HTTP covers what the clients never send
 * (bad assertions, missing bearer tokens, the non-SSE stream) and the checks the fake makes.
 */
import { Storage } from '@google-cloud/storage';
import { ApiError, GoogleGenAI } from '@google/genai';
import { JWT } from 'google-auth-library';
import { CLOUD_PLATFORM_SCOPE, GOOGLE_TOKEN_AUDIENCES, JWT_BEARER_GRANT, signAssertion, type ServiceAccountKey } from './google-auth';
import { startFakeVertex, type FakeVertex } from './vertex-server';

/**
 * google-auth-library posts the JWT-bearer exchange to Google's fixed token URL (it never reads the key
 * file's `token_uri`); its transporter's `adapter` hook is the one seam to send that request to the fake.
 */
function toFakeTokenEndpoint(tokenUrl: string) {
  return <T, O extends { url?: string | URL }>(options: O, next: (options: O) => T): T => {
    if (!GOOGLE_TOKEN_AUDIENCES.includes(String(options.url))) return next(options);
    // gaxios 6 (under @google-cloud/storage) passes the URL as a string, gaxios 7 as a URL.
    return next({ ...options, url: typeof options.url === 'string' ? tokenUrl : new URL(tokenUrl) });
  };
}

/** google-auth-library's options for the fake's service account, its token requests sent to the fake. */
const authOptions = (fake: FakeVertex) => ({
  credentials: fake.serviceAccount,
  clientOptions: { transporterOptions: { adapter: toFakeTokenEndpoint(fake.tokenUrl) } },
});

const jwtClient = (fake: FakeVertex, account: ServiceAccountKey) =>
  new JWT({
    email: account.client_email,
    key: account.private_key,
    scopes: [CLOUD_PLATFORM_SCOPE],
    transporterOptions: { adapter: toFakeTokenEndpoint(fake.tokenUrl) },
  });

const genai = (fake: FakeVertex, overrides: { project?: string; location?: string } = {}) =>
  new GoogleGenAI({
    vertexai: true,
    project: overrides.project ?? fake.projectId,
    location: overrides.location ?? fake.location,
    httpOptions: { baseUrl: fake.vertexOrigin },
    googleAuthOptions: authOptions(fake),
  });

const exampleLine = (question: string, answer: string) =>
  JSON.stringify({
    systemInstruction: { role: 'system', parts: [{ text: 'Answer briefly.' }] },
    contents: [
      { role: 'user', parts: [{ text: question }] },
      { role: 'model', parts: [{ text: answer }] },
    ],
  });
const GEMINI_DATASET = `${exampleLine('What is 2+2?', '4')}\n${exampleLine('Capital of France?', 'Paris')}\n`;
const OPENAI_DATASET = `${JSON.stringify({
  messages: [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello' },
  ],
})}\n`;

/** The body of a Google API error as the client received it. */
async function googleError(promise: Promise<unknown>): Promise<{ status: number; error: { code: number; message: string; status: string } }> {
  const e = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(ApiError);
  return { status: (e as ApiError).status, ...JSON.parse((e as ApiError).message) };
}

/** A Google error body with this `status` (and a message containing `message`). */
const errorBody = (status: string, message?: string) => ({ error: { status, ...(message ? { message: expect.stringContaining(message) } : {}) } });
/** What `googleError` gives for a refusal with this HTTP status. */
const refusal = (httpStatus: number, status: string, message?: string) => ({ status: httpStatus, ...errorBody(status, message) });

let fake: FakeVertex;
beforeAll(async () => {
  fake = await startFakeVertex();
});
afterAll(() => fake.close());

describe('token endpoint', () => {
  const postToken = (form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') =>
    fetch(fake.tokenUrl, { method: 'POST', headers: { 'content-type': contentType }, body: new URLSearchParams(form).toString() });
  const exchange = (assertion: string) => postToken({ grant_type: JWT_BEARER_GRANT, assertion });

  it("gives google-auth-library's JWT client a token that the other APIs accept", async () => {
    const before = fake.state.oauth.exchanges;
    const { token } = await jwtClient(fake, fake.serviceAccount).getAccessToken();
    expect(token).toMatch(/^ya29\./);
    expect(fake.state.oauth.exchanges).toBe(before + 1);
    const received = fake.state.oauth.requests.at(-1)!;
    expect(received.header).toEqual({ alg: 'RS256' });
    const { client_email } = fake.serviceAccount;
    expect(received.claims).toMatchObject({ iss: client_email, aud: 'https://oauth2.googleapis.com/token', scope: CLOUD_PLATFORM_SCOPE });
    const list = await fetch(`${fake.storageUrl}/storage/v1/b/fake-bucket/o`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(200);
  });

  it('accepts an assertion signed as gtoken signs it, addressed to its own URL, and answers with expires_in', async () => {
    fake.settings.tokenLifetimeSeconds = 120;
    try {
      const res = await exchange(signAssertion(fake.serviceAccount, { aud: fake.tokenUrl }));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ access_token: expect.stringMatching(/^ya29\./), expires_in: 120, token_type: 'Bearer' });
    } finally {
      fake.settings.tokenLifetimeSeconds = 3599;
    }
  });

  const now = () => Math.floor(Date.now() / 1000);
  const signed = (claims?: Record<string, unknown>, header?: Record<string, unknown>) => signAssertion(fake.serviceAccount, claims, header);
  const strangersKey = () => ({ client_email: fake.serviceAccount.client_email, private_key: fake.unknownServiceAccount().private_key });
  it.each([
    ['a bad signature', 'invalid_grant', () => signAssertion(strangersKey()), 'Invalid JWT Signature.'],
    ['a wrong audience', 'invalid_grant', () => signed({ aud: 'https://example.com/token' }), 'Failed audience check'],
    ['an expired assertion', 'invalid_grant', () => signed({ iat: now() - 7200, exp: now() - 3600 }), 'short-lived token'],
    ['an assertion living over an hour', 'invalid_grant', () => signed({ exp: now() + 7200 }), 'short-lived token'],
    ['an unknown issuer', 'invalid_grant', () => signAssertion(fake.unknownServiceAccount()), 'account not found'],
    ['an HS256 header', 'invalid_grant', () => signed({}, { alg: 'HS256' }), 'RS256'],
    ['a key id of another key', 'invalid_grant', () => signed({}, { alg: 'RS256', kid: 'not-the-key-id' }), 'Invalid JWT Signature.'],
    ['not a JWT', 'invalid_grant', () => 'not.a-jwt', 'Invalid JWT'],
    ['no cloud-platform scope', 'invalid_scope', () => signed({ scope: 'https://www.googleapis.com/auth/devstorage.read_only' }), 'Invalid OAuth scope'],
    ['a subject other than the account', 'unauthorized_client', () => signed({ sub: 'someone@example.com' }), 'Client is unauthorized'],
  ])('refuses %s with %s', async (_case, error, assertion, description) => {
    const before = fake.state.oauth.exchanges;
    const res = await exchange(assertion());
    expect(res.status).toBe(error === 'unauthorized_client' ? 401 : 400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe(error);
    expect(body.error_description).toContain(description);
    expect(fake.state.oauth.exchanges).toBe(before);
  });

  it('refuses another grant type, a missing assertion and a JSON body', async () => {
    const wrongGrant = await postToken({ grant_type: 'client_credentials', assertion: signed() });
    const unsupported = { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: client_credentials' };
    expect([wrongGrant.status, await wrongGrant.json()]).toEqual([400, unsupported]);
    const missing = await postToken({ grant_type: JWT_BEARER_GRANT });
    expect([missing.status, await missing.json()]).toEqual([400, { error: 'invalid_request', error_description: 'Missing required parameter: assertion' }]);
    const json = await postToken({ grant_type: JWT_BEARER_GRANT, assertion: signed() }, 'application/json');
    expect(json.status).toBe(400);
  });

  it('answers an injected failure in its own error shape', async () => {
    fake.failNext('POST', '/token', 503);
    const res = await exchange(signed());
    expect([res.status, await res.json()]).toEqual([503, { error: 'internal_failure', error_description: 'The server had an error' }]);
  });

  it("makes google-auth-library's JWT client fail for an account it does not know", async () => {
    await expect(jwtClient(fake, fake.unknownServiceAccount()).getAccessToken()).rejects.toThrow('invalid_grant: Invalid grant: account not found');
  });
});

/** @google-cloud/storage against the fake, its token requests sent to the fake token endpoint. */
const storageClient = () =>
  new Storage({
    apiEndpoint: fake.storageUrl,
    useAuthWithCustomEndpoint: true,
    projectId: fake.projectId,
    ...authOptions(fake),
    retryOptions: { autoRetry: false },
  });

describe('Cloud Storage', () => {
  const storage = storageClient;
  const bucket = () => storage().bucket('fake-bucket');
  const stored = (name: string) => fake.state.storage.buckets.get('fake-bucket')!.get(name);
  const uploadRequests = () => fake.state.requests.filter((r) => r.path.startsWith('/upload/storage/v1/b/fake-bucket/o'));

  it('takes a small upload (multipart) and keeps the exact bytes and content type', async () => {
    const data = Buffer.from(GEMINI_DATASET);
    await bucket().file('datasets/small.jsonl').save(data, { resumable: false, contentType: 'application/jsonl' });
    expect(stored('datasets/small.jsonl')!.data.equals(data)).toBe(true);
    expect(stored('datasets/small.jsonl')!.contentType).toBe('application/jsonl');
    expect(uploadRequests().at(-1)!.query.get('uploadType')).toBe('multipart');
  });

  /**
   * @google-cloud/storage 7.22 does not pass `useAuthWithCustomEndpoint` to the upload it starts inside
   * `save()`, so against a custom endpoint that upload starts without a token (and the fake, like GCS,
   * refuses it). `createResumableUpload()` does pass it; the chunks then go to the session URI, which
   * needs no token.
   */
  const resumableSave = async (name: string, data: Buffer, options: { chunkSize?: number } = {}) => {
    const file = bucket().file(name);
    const [uri] = await file.createResumableUpload();
    await file.save(data, { resumable: true, uri, ...options });
  };

  it("refuses @google-cloud/storage's own resumable start, which carries no token to a custom endpoint", async () => {
    await expect(bucket().file('datasets/unauthenticated.jsonl').save(Buffer.from('x'), { resumable: true })).rejects.toThrow('401');
    expect(stored('datasets/unauthenticated.jsonl')).toBeUndefined();
  });

  it('takes a resumable upload in 256 KiB chunks, answering 308 until the last one', async () => {
    const data = Buffer.alloc(600 * 1024, 'abcdefghij');
    const before = uploadRequests().length;
    await resumableSave('datasets/big.jsonl', data, { chunkSize: 256 * 1024 });
    expect(stored('datasets/big.jsonl')!.data.equals(data)).toBe(true);
    const requests = uploadRequests().slice(before);
    // The client first asks the session how far it got (`bytes */*`), then sends the chunks; only the start carries a token.
    expect(requests.map((r) => [r.method, !!r.headers.authorization, r.headers['content-range']])).toEqual([
      ['POST', true, undefined],
      ['PUT', false, 'bytes */*'],
      ['PUT', false, 'bytes 0-262143/*'],
      ['PUT', false, 'bytes 262144-524287/*'],
      ['PUT', false, `bytes 524288-614399/${data.length}`],
    ]);
  });

  it('takes a resumable upload streamed in one request', async () => {
    const data = Buffer.from('x'.repeat(5000));
    await resumableSave('datasets/streamed.jsonl', data);
    expect(stored('datasets/streamed.jsonl')!.data.equals(data)).toBe(true);
  });

  it('downloads an object (the client checks the CRC32C and MD5 the fake reports) and reads its metadata', async () => {
    const data = Buffer.from(GEMINI_DATASET);
    fake.putObject('fake-bucket', 'datasets/download.jsonl', data);
    const [crc32cChecked] = await bucket().file('datasets/download.jsonl').download();
    const [md5Checked] = await bucket().file('datasets/download.jsonl').download({ validation: 'md5' });
    expect(crc32cChecked.equals(data) && md5Checked.equals(data)).toBe(true);
    const [metadata] = await bucket().file('datasets/download.jsonl').getMetadata();
    expect(metadata).toMatchObject({
      kind: 'storage#object',
      name: 'datasets/download.jsonl',
      bucket: 'fake-bucket',
      size: String(data.length),
      contentType: 'application/jsonl',
    });
    expect(metadata.timeCreated).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('lists by prefix, page by page, and rolls deeper names up into prefixes with a delimiter', async () => {
    for (const name of ['list/a', 'list/b', 'list/c', 'list/sub/e', 'other/d']) fake.putObject('fake-bucket', name, name);
    const [first, next] = await bucket().getFiles({ prefix: 'list/', maxResults: 2, autoPaginate: false });
    expect(first.map((f) => f.name)).toEqual(['list/a', 'list/b']);
    const [second, after] = await bucket().getFiles({ ...next, autoPaginate: false });
    expect(second.map((f) => f.name)).toEqual(['list/c', 'list/sub/e']);
    expect(after).toBeNull();
    const [shallow, , response] = await bucket().getFiles({ prefix: 'list/', delimiter: '/', autoPaginate: false });
    expect(shallow.map((f) => f.name)).toEqual(['list/a', 'list/b', 'list/c']);
    expect((response as { prefixes?: string[] }).prefixes).toEqual(['list/sub/']);
  });

  it('deletes an object', async () => {
    fake.putObject('fake-bucket', 'to-delete.jsonl', 'bye');
    await bucket().file('to-delete.jsonl').delete();
    expect(stored('to-delete.jsonl')).toBeUndefined();
    expect(await bucket().file('to-delete.jsonl').exists()).toEqual([false]);
  });

  it("answers GCS's 404s for an unknown bucket and object", async () => {
    const unknownBucket = storage().bucket('no-such-bucket').file('x').save('x', { resumable: false });
    await expect(unknownBucket).rejects.toMatchObject({ code: 404, message: 'The specified bucket does not exist.' });
    await expect(bucket().file('no-such-object').getMetadata()).rejects.toMatchObject({ code: 404, message: 'No such object: fake-bucket/no-such-object' });
  });

  describe('over raw HTTP', () => {
    type GcsErrorBody = { error: { code: number; message: string; errors: { reason: string }[] } };
    const bearer = () => ({ authorization: `Bearer ${fake.issueToken()}` });
    const listUrl = () => `${fake.storageUrl}/storage/v1/b/fake-bucket/o`;
    const upload = (query: string, headers: Record<string, string>, body: string | Buffer<ArrayBuffer>) =>
      fetch(`${fake.storageUrl}/upload/storage/v1/b/fake-bucket/o?${query}`, { method: 'POST', headers: { ...bearer(), ...headers }, body });
    /** A PUT to a resumable session, without a token: the session URI is the credential. */
    const putChunk = (session: string, range: string, body?: string | Buffer<ArrayBuffer>) =>
      fetch(session, { method: 'PUT', headers: { 'content-range': range }, body });
    const startSession = async (name: string) => {
      const started = await upload(`uploadType=resumable&name=${name}`, { 'content-type': 'application/json' }, '{}');
      return started.headers.get('location')!;
    };

    it('takes a simple media upload, the way the gateway uploads', async () => {
      const res = await upload('uploadType=media&name=media%2Ftrain.jsonl', { 'content-type': 'application/jsonl' }, GEMINI_DATASET);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ kind: 'storage#object', name: 'media/train.jsonl', size: String(Buffer.byteLength(GEMINI_DATASET)) });
      expect(stored('media/train.jsonl')!.data.toString()).toBe(GEMINI_DATASET);
    });

    it('refuses a request without a bearer token, or with a token it did not issue or that expired', async () => {
      const anonymous = await fetch(listUrl());
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
      expect(((await anonymous.json()) as GcsErrorBody).error.errors[0].reason).toBe('required');
      const forged = await fetch(listUrl(), { headers: { authorization: 'Bearer ya29.forged' } });
      expect([forged.status, ((await forged.json()) as GcsErrorBody).error.message]).toEqual([401, 'Invalid Credentials']);
      const expiring = bearer();
      fake.expireTokens();
      expect((await fetch(listUrl(), { headers: expiring })).status).toBe(401);
    });

    it('refuses an object name whose slashes are not URL-encoded', async () => {
      fake.putObject('fake-bucket', 'dir/file.jsonl', 'x');
      expect((await fetch(`${fake.storageUrl}/storage/v1/b/fake-bucket/o/dir%2Ffile.jsonl`, { headers: bearer() })).status).toBe(200);
      expect((await fetch(`${fake.storageUrl}/storage/v1/b/fake-bucket/o/dir/file.jsonl`, { headers: bearer() })).status).toBe(404);
    });

    it('refuses a non-final resumable chunk that is not a multiple of 256 KiB, and a checksum that does not match', async () => {
      const chunk = await putChunk(await startSession('chunks.jsonl'), 'bytes 0-999/*', 'x'.repeat(1000));
      expect(chunk.status).toBe(400);
      const badHash = await upload('uploadType=media&name=hash.jsonl', { 'x-goog-hash': 'md5=AAAAAAAAAAAAAAAAAAAAAA==' }, 'data');
      expect(badHash.status).toBe(400);
      expect(stored('hash.jsonl')).toBeUndefined();
    });

    it('answers a resumable status query with 308 and the Range received so far', async () => {
      const session = await startSession('status.jsonl');
      const first = await putChunk(session, 'bytes 0-262143/*', Buffer.alloc(262144, 1));
      expect([first.status, first.headers.get('range')]).toEqual([308, 'bytes=0-262143']);
      const query = await putChunk(session, 'bytes */*');
      expect([query.status, query.headers.get('range')]).toEqual([308, 'bytes=0-262143']);
      const last = await putChunk(session, 'bytes 262144-262145/262146', 'ab');
      expect(last.status).toBe(200);
      expect(stored('status.jsonl')!.data.length).toBe(262146);
    });

    it('answers an injected 429 in the GCS error shape', async () => {
      fake.failNext('GET', '/storage/v1/b/fake-bucket/o', 429);
      const res = await fetch(listUrl(), { headers: bearer() });
      expect(res.status).toBe(429);
      expect(((await res.json()) as GcsErrorBody).error).toMatchObject({ code: 429, errors: [{ reason: 'rateLimitExceeded' }] });
    });
  });
});

describe('Vertex AI', () => {
  const gcsUri = 'gs://fake-bucket/tuning/train.jsonl';
  let ai: GoogleGenAI;
  beforeAll(() => {
    fake.putObject('fake-bucket', 'tuning/train.jsonl', GEMINI_DATASET);
    ai = genai(fake);
  });
  const tune = (config: Record<string, unknown> = {}, uri = gcsUri) =>
    ai.tunings.tune({ baseModel: 'gemini-2.0-flash-001', trainingDataset: { gcsUri: uri }, config: { epochCount: 2, ...config } });
  const parent = () => `projects/${fake.projectNumber}/locations/${fake.location}`;

  it('creates a tuning job from what @google/genai sends, and drives it to SUCCEEDED one GET at a time', async () => {
    const hyperParameters = { learningRateMultiplier: 1, adapterSize: 'ADAPTER_SIZE_FOUR' };
    const created = await tune({ ...hyperParameters, tunedModelDisplayName: 'faq-bot', validationDataset: { gcsUri } });
    expect(created.name).toMatch(new RegExp(`^${parent()}/tuningJobs/\\d{19}$`));
    expect(created).toMatchObject({ state: 'JOB_STATE_PENDING', baseModel: 'gemini-2.0-flash-001', createTime: expect.stringMatching(/Z$/) });
    expect(fake.state.createJobRequests.at(-1)).toEqual({
      baseModel: 'gemini-2.0-flash-001',
      tunedModelDisplayName: 'faq-bot',
      supervisedTuningSpec: {
        trainingDatasetUri: gcsUri,
        validationDatasetUri: gcsUri,
        hyperParameters: { epochCount: 2, learningRateMultiplier: 1, adapterSize: 'ADAPTER_SIZE_FOUR' },
      },
    });
    expect(created.supervisedTuningSpec?.hyperParameters?.epochCount).toBe('2');

    const running = await ai.tunings.get({ name: created.name! });
    expect(running.state).toBe('JOB_STATE_RUNNING');
    expect(running.startTime).toBeDefined();
    expect(running.tuningDataStats?.supervisedTuningDataStats).toMatchObject({ tuningDatasetExampleCount: '2', tuningStepCount: '4' });

    const succeeded = await ai.tunings.get({ name: created.name! });
    expect(succeeded.state).toBe('JOB_STATE_SUCCEEDED');
    expect(succeeded.endTime).toBeDefined();
    expect(succeeded.tunedModel?.model).toMatch(new RegExp(`^${parent()}/models/\\d{19}@1$`));
    expect(succeeded.tunedModel?.endpoint).toMatch(new RegExp(`^${parent()}/endpoints/\\d{19}$`));
    expect(succeeded.tunedModel?.checkpoints?.map((c) => [c.epoch, c.step])).toEqual([
      ['1', '2'],
      ['2', '4'],
    ]);
    expect((await ai.tunings.get({ name: created.name! })).state).toBe('JOB_STATE_SUCCEEDED');
  });

  it("serves the tuned model (and each checkpoint) on its endpoint, and records the request with the caller's token", async () => {
    const job = await tune();
    await ai.tunings.get({ name: job.name! });
    const { tunedModel } = await ai.tunings.get({ name: job.name! });
    const config = { systemInstruction: 'Answer briefly.' };
    const answer = await ai.models.generateContent({ model: tunedModel!.endpoint!, contents: 'What is 2+2?', config });
    expect(answer.text).toBe(`Answer from ${tunedModel!.endpoint}: What is 2+2?`);
    const firstEpoch = tunedModel!.checkpoints![0].endpoint!;
    expect((await ai.models.generateContent({ model: firstEpoch, contents: 'Hi' })).text).toBe(`Answer from ${firstEpoch}: Hi`);
    expect(answer.candidates?.[0].finishReason).toBe('STOP');
    expect(answer.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    const received = fake.state.generateRequests.at(-2)!;
    expect(received).toMatchObject({ target: `endpoints/${tunedModel!.endpoint!.split('/').at(-1)}`, method: 'generateContent' });
    expect(received.body.systemInstruction).toMatchObject({ parts: [{ text: 'Answer briefly.' }] });
    expect(fake.state.oauth.check(`Bearer ${received.accessToken}`)).toMatchObject({ clientEmail: fake.serviceAccount.client_email });
  });

  it('streams a base model answer as server-sent events, chunk by chunk', async () => {
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Tell me a long story please' });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.text).join('')).toBe('Answer from gemini-2.5-flash: Tell me a long story please');
    expect(chunks.at(-1)!.candidates?.[0].finishReason).toBe('STOP');
    expect(chunks.at(-1)!.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    const received = fake.state.generateRequests.at(-1);
    expect(received).toMatchObject({ target: 'publishers/google/models/gemini-2.5-flash', method: 'streamGenerateContent', alt: 'sse' });
  });

  it('lists jobs newest first, page by page, and filters by state', async () => {
    const jobs = [await tune(), await tune(), await tune()];
    const pager = await ai.tunings.list({ config: { pageSize: 2 } });
    expect(pager.page.map((j) => j.name)).toEqual([jobs[2].name, jobs[1].name]);
    const all = [];
    for await (const job of pager) all.push(job.name);
    expect(all.length).toBe(fake.state.tuningJobs.size);
    const pending = await ai.tunings.list({ config: { filter: 'state="JOB_STATE_PENDING"' } });
    expect(pending.page.every((j) => String(j.state) === 'JOB_STATE_PENDING')).toBe(true);
    expect(pending.page.map((j) => j.name)).toEqual(expect.arrayContaining(jobs.map((j) => j.name)));
  });

  it('cancels a job (CANCELLING, then CANCELLED with error code 1) and refuses to cancel it again', async () => {
    const job = await tune();
    await ai.tunings.cancel({ name: job.name! });
    expect(fake.state.tuningJobs.get(job.name!.split('/').at(-1)!)!.state).toBe('JOB_STATE_CANCELLING');
    const cancelled = await ai.tunings.get({ name: job.name! });
    expect(cancelled).toMatchObject({ state: 'JOB_STATE_CANCELLED', error: { code: 1 } });
    const again = await googleError(ai.tunings.cancel({ name: job.name! }));
    expect(again).toMatchObject(refusal(400, 'FAILED_PRECONDITION'));
  });

  it('ends a job FAILED with its error when a test forces it', async () => {
    const job = await tune();
    fake.failJob(job.name!, { code: 3, message: 'Dataset too small.' });
    const failed = await ai.tunings.get({ name: job.name! });
    expect(failed).toMatchObject({ state: 'JOB_STATE_FAILED', error: { code: 3, message: 'Dataset too small.' }, endTime: expect.any(String) });
  });

  it('exchanges one token for a whole sequence of calls of one client', async () => {
    const client = genai(fake);
    const before = fake.state.oauth.exchanges;
    const job = await client.tunings.tune({ baseModel: 'gemini-2.5-flash', trainingDataset: { gcsUri } });
    await client.tunings.get({ name: job.name! });
    await client.tunings.list({});
    await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
    expect(fake.state.oauth.exchanges).toBe(before + 1);
  });

  describe('refuses what Vertex refuses', () => {
    it('an OpenAI-format dataset', async () => {
      fake.putObject('fake-bucket', 'tuning/openai.jsonl', OPENAI_DATASET);
      const refused = await googleError(tune({}, 'gs://fake-bucket/tuning/openai.jsonl'));
      expect(refused).toMatchObject(refusal(400, 'INVALID_ARGUMENT', 'line 1: Unknown name "messages"'));
    });

    it.each([
      ['a missing dataset', {}, 'gs://fake-bucket/tuning/missing.jsonl', 'does not exist'],
      ['both learning rate and multiplier', { learningRate: 0.0001, learningRateMultiplier: 1 }, gcsUri, 'Only one of learning_rate and'],
      [
        'an adapter size not in the enum',
        { adapterSize: 'ADAPTER_SIZE_THREE' },
        gcsUri,
        "Invalid value at 'tuning_job.supervised_tuning_spec.hyper_parameters.adapter_size'",
      ],
    ])('%s', async (_case, config, uri, message) => {
      expect(await googleError(tune(config, uri))).toMatchObject(refusal(400, 'INVALID_ARGUMENT', message));
    });

    it('a job for a project or region this host does not serve', async () => {
      const otherProject = await googleError(genai(fake, { project: 'someone-else' }).tunings.list({}));
      expect(otherProject).toMatchObject(refusal(403, 'PERMISSION_DENIED', 'Permission denied on resource project someone-else.'));
      const otherRegion = await googleError(genai(fake, { location: 'europe-west4' }).tunings.list({}));
      expect(otherRegion).toMatchObject(refusal(400, 'INVALID_ARGUMENT', 'The valid location ID is `us-central1`'));
    });

    it('an endpoint that serves no tuned model, and an unknown publisher model', async () => {
      const endpoint = await googleError(ai.models.generateContent({ model: `${parent()}/endpoints/1234567890123456789`, contents: 'hi' }));
      expect(endpoint).toMatchObject(refusal(404, 'NOT_FOUND', 'Endpoint'));
      const model = await googleError(ai.models.generateContent({ model: 'gemini-0.1-nonexistent', contents: 'hi' }));
      expect(model).toMatchObject(refusal(404, 'NOT_FOUND', 'Publisher model'));
    });

    it('an injected 429 as RESOURCE_EXHAUSTED', async () => {
      fake.failNext('POST', `/v1beta1/projects/${fake.projectId}/locations/${fake.location}/publishers/`, 429);
      const throttled = await googleError(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }));
      expect(throttled).toMatchObject(refusal(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted'));
    });
  });

  describe('over raw HTTP', () => {
    const url = (path: string) => `${fake.vertexUrl}/projects/${fake.projectId}/locations/${fake.location}/${path}`;
    const call = (path: string, body: unknown, signal?: AbortSignal) =>
      fetch(url(path), {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.issueToken()}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    const contents = [{ role: 'user', parts: [{ text: 'Stream this answer to me' }] }];

    it("refuses a request without a bearer token with Google's 401", async () => {
      const res = await fetch(url('tuningJobs'));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect(await res.json()).toMatchObject(errorBody('UNAUTHENTICATED', 'missing required authentication credential'));
    });

    it('takes epochCount as an int64 string and refuses one that is not an integer', async () => {
      const job = (epochCount: unknown) => ({
        baseModel: 'gemini-2.0-flash-001',
        supervisedTuningSpec: { trainingDatasetUri: gcsUri, hyperParameters: { epochCount } },
      });
      const asString = await call('tuningJobs', job('5'));
      expect(asString.status).toBe(200);
      expect(await asString.json()).toMatchObject({ supervisedTuningSpec: { hyperParameters: { epochCount: '5' } } });
      const notInt = await call('tuningJobs', job('three'));
      expect(notInt.status).toBe(400);
      expect(await notInt.json()).toMatchObject(errorBody('INVALID_ARGUMENT', '(TYPE_INT64), "three"'));
    });

    it('refuses an OpenAI-style generateContent body', async () => {
      const res = await call('publishers/google/models/gemini-2.5-flash:generateContent', { messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject(errorBody('INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "messages": Cannot find field.'));
    });

    it('streams a JSON array element by element without alt=sse', async () => {
      fake.settings.streamDelayMs = 5;
      try {
        const res = await call('publishers/google/models/gemini-2.5-flash:streamGenerateContent', { contents });
        expect(res.headers.get('content-type')).toContain('application/json');
        let reads = 0;
        let text = '';
        const decoder = new TextDecoder();
        const reader = res.body!.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          reads++;
          text += decoder.decode(read.value, { stream: true });
        }
        expect(reads).toBeGreaterThan(1);
        const elements = JSON.parse(text) as { candidates: { content: { parts: { text: string }[] } }[] }[];
        expect(elements.map((e) => e.candidates[0].content.parts[0].text).join('')).toBe('Answer from gemini-2.5-flash: Stream this answer to me');
      } finally {
        fake.settings.streamDelayMs = 0;
      }
    });

    it('counts a stream the client abandons midway', async () => {
      fake.settings.streamDelayMs = 50;
      try {
        const before = fake.state.abortedStreams;
        const controller = new AbortController();
        const res = await call('publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents }, controller.signal);
        const reader = res.body!.getReader();
        expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^data: \{/);
        controller.abort();
        // The server notices the closed connection a moment after the client aborts.
        for (let i = 0; i < 50 && fake.state.abortedStreams === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(fake.state.abortedStreams).toBe(before + 1);
      } finally {
        fake.settings.streamDelayMs = 0;
      }
    });
  });
});

describe('batch prediction', () => {
  let ai: GoogleGenAI;
  beforeAll(() => {
    ai = genai(fake);
  });
  const parent = () => `projects/${fake.projectNumber}/locations/${fake.location}`;
  const requestLine = (i: number, extra: Record<string, unknown> = {}) => ({
    request: { contents: [{ role: 'user', parts: [{ text: `Question ${i}?` }] }], generationConfig: { maxOutputTokens: 40 } },
    ...extra,
  });
  const jsonl = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  /** Uploads the input with @google-cloud/storage, as a caller does. */
  const upload = (name: string, lines: unknown[]) => storageClient().bucket('fake-bucket').file(name).save(jsonl(lines), { resumable: false });
  const download = async (uri: string) => {
    const [, bucket, name] = /^gs:\/\/([^/]+)\/(.+)$/.exec(uri)!;
    const [data] = await storageClient().bucket(bucket).file(name).download();
    return data
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
  };
  const create = (src: string, model = 'gemini-2.5-flash', displayName = 'batch-1') =>
    ai.batches.create({ model, src, config: { dest: 'gs://fake-bucket/batch/out', displayName } });

  it('runs a job from what @google/genai sends: PENDING → RUNNING → SUCCEEDED, predictions.jsonl under prediction-model-…, completionStats as strings', async () => {
    await upload('batch/in.jsonl', [requestLine(0, { requestId: 'a' }), requestLine(1, { requestId: 'b' }), { request: { contents: [] }, requestId: 'bad' }]);
    const created = await create('gs://fake-bucket/batch/in.jsonl');
    expect(created.name).toMatch(new RegExp(`^${parent()}/batchPredictionJobs/\\d{19}$`));
    expect(created.state).toBe('JOB_STATE_PENDING');
    const job = fake.batch.jobs.get(created.name!.split('/').at(-1)!)!;
    expect(job).toMatchObject({
      model: 'publishers/google/models/gemini-2.5-flash',
      inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: ['gs://fake-bucket/batch/in.jsonl'] } },
      outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://fake-bucket/batch/out' } },
    });

    const running = await ai.batches.get({ name: created.name! });
    expect(running.state).toBe('JOB_STATE_RUNNING');
    expect(running.completionStats).toEqual({ successfulCount: '0', failedCount: '0', incompleteCount: '3' });
    const done = await ai.batches.get({ name: created.name! });
    expect(done).toMatchObject({ state: 'JOB_STATE_SUCCEEDED', endTime: expect.any(String) });
    expect(done.completionStats).toEqual({ successfulCount: '2', failedCount: '1', incompleteCount: '0' });
    const directory = done.outputInfo!.gcsOutputDirectory!;
    expect(directory).toMatch(/^gs:\/\/fake-bucket\/batch\/out\/prediction-model-\d{4}-\d\d-\d\dT[\d:.]+Z$/);

    const rows = await download(`${directory}/predictions.jsonl`);
    expect(rows.map((r) => r.requestId)).toEqual(['a', 'b', 'bad']);
    expect(rows[0]).toMatchObject({
      request: requestLine(0).request,
      status: '',
      response: { candidates: [{ content: { role: 'model', parts: [{ text: expect.any(String) }] } }], usageMetadata: { totalTokenCount: expect.any(Number) } },
    });
    expect(rows[2].response).toBeUndefined();
    expect(rows[2].status).toContain('400');
  });

  it('runs a tuned model by its projects/…/models/… name, and refuses an unknown model or another region', async () => {
    fake.putObject('fake-bucket', 'tuning/train.jsonl', GEMINI_DATASET);
    const tuning = await ai.tunings.tune({ baseModel: 'gemini-2.0-flash-001', trainingDataset: { gcsUri: 'gs://fake-bucket/tuning/train.jsonl' } });
    fake.advance(tuning.name!);
    const tunedModel = fake.advance(tuning.name!).tunedModel!.model;
    await upload('batch/tuned.jsonl', [requestLine(0)]);
    const byProjectId = tunedModel.replace(fake.projectNumber, fake.projectId).split('@')[0];
    const created = await create('gs://fake-bucket/batch/tuned.jsonl', byProjectId, 'tuned');
    const done = fake.batch.advance(created.name!, 2);
    expect(done.completionStats).toMatchObject({ successfulCount: '1' });
    const [row] = await download(`${done.outputInfo!.gcsOutputDirectory}/predictions.jsonl`);
    expect(row.response.modelVersion).toBe('gemini-2.0-flash-001');

    const unknown = await googleError(create('gs://fake-bucket/batch/tuned.jsonl', `${parent()}/models/1234567890123456789`));
    expect(unknown).toMatchObject(refusal(404, 'NOT_FOUND', 'not found'));
    const global = await googleError(create('gs://fake-bucket/batch/tuned.jsonl', byProjectId.replace(fake.location, 'global')));
    expect(global).toMatchObject(refusal(400, 'INVALID_ARGUMENT', 'location'));
  });

  it('cancels a running job (CANCELLING, then CANCELLED with the rows already written), and refuses to cancel it again', async () => {
    fake.settings.batchRowsPerStep = 2;
    try {
      await upload(
        'batch/five.jsonl',
        [0, 1, 2, 3, 4].map((i) => requestLine(i)),
      );
      const created = await create('gs://fake-bucket/batch/five.jsonl');
      fake.batch.advance(created.name!, 2);
      await ai.batches.cancel({ name: created.name! });
      const cancelled = await ai.batches.get({ name: created.name! });
      expect(cancelled).toMatchObject({ state: 'JOB_STATE_CANCELLED', error: { code: 1 } });
      expect(cancelled.completionStats).toEqual({ successfulCount: '2', failedCount: '0', incompleteCount: '3' });
      expect(await download(`${cancelled.outputInfo!.gcsOutputDirectory}/predictions.jsonl`)).toHaveLength(2);
      expect(await googleError(ai.batches.cancel({ name: created.name! }))).toMatchObject(refusal(400, 'FAILED_PRECONDITION'));

      const expiring = await create('gs://fake-bucket/batch/five.jsonl');
      expect(fake.batch.expire(expiring.name!)).toMatchObject({ state: 'JOB_STATE_EXPIRED', completionStats: { incompleteCount: '5' } });
      const failing = await create('gs://fake-bucket/batch/five.jsonl');
      fake.batch.fail(failing.name!, { code: 3, message: 'Quota exceeded.' });
      expect(await ai.batches.get({ name: failing.name! })).toMatchObject({ state: 'JOB_STATE_FAILED', error: { code: 3, message: 'Quota exceeded.' } });
    } finally {
      fake.settings.batchRowsPerStep = Infinity;
    }
  });

  it('lists jobs newest first, page by page, and filters by state', async () => {
    await upload('batch/one.jsonl', [requestLine(0)]);
    const jobs = [await create('gs://fake-bucket/batch/one.jsonl'), await create('gs://fake-bucket/batch/one.jsonl')];
    const pager = await ai.batches.list({ config: { pageSize: 1 } });
    expect(pager.page.map((j) => j.name)).toEqual([jobs[1].name]);
    const all: string[] = [];
    for await (const job of pager) all.push(job.name!);
    expect(all.length).toBe(fake.batch.jobs.size);
    const pending = await ai.batches.list({ config: { filter: 'state="JOB_STATE_PENDING"' } });
    expect(pending.page.map((j) => j.name)).toEqual(expect.arrayContaining(jobs.map((j) => j.name)));
    expect(pending.page.every((j) => String(j.state) === 'JOB_STATE_PENDING')).toBe(true);
  });

  describe('over raw HTTP', () => {
    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${fake.vertexUrl}/${parent()}/batchPredictionJobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.issueToken()}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: { message: string; status: string } } };
    };
    const valid = {
      displayName: 'raw',
      model: 'publishers/google/models/gemini-2.5-flash',
      inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: ['gs://fake-bucket/batch/raw.jsonl'] } },
      outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://fake-bucket/batch/out' } },
    };
    beforeAll(() => fake.putObject('fake-bucket', 'batch/raw.jsonl', jsonl([requestLine(0)])));

    it('takes the REST body as the gateway sends it (snake_case too), and refuses what Vertex refuses', async () => {
      expect((await post(valid)).status).toBe(200);
      expect((await post({ ...valid, display_name: 'snake', displayName: undefined })).status).toBe(200);
      const refusals = [
        [{ ...valid, displayName: undefined }, 'display_name is required'],
        [{ ...valid, model: 'publishers/google/models/gemini-0' }, 'was not found'],
        [{ ...valid, inputConfig: { ...valid.inputConfig, gcsSource: { uris: ['gs://fake-bucket/batch/missing.jsonl'] } } }, 'does not exist'],
        [{ ...valid, inputConfig: { instancesFormat: 'csv', gcsSource: valid.inputConfig.gcsSource } }, 'instances_format'],
        [{ ...valid, outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://no-bucket/out' } } }, 'not a bucket'],
        [{ ...valid, dataflowConfig: {} }, 'Unknown name "dataflowConfig"'],
      ] as const;
      for (const [body, message] of refusals) {
        const res = await post(body);
        expect([res.status, res.body.error?.message]).toEqual([expect.any(Number), expect.stringContaining(message)]);
        expect(res.status === 400 || res.status === 404).toBe(true);
      }
    });
  });
});
