import OpenAI, { toFile } from 'openai';
import { gatewayFetch } from '../support/answers';
import { api, createOrganisation, startTestGateway, type TestGateway } from '../support/gateway';
import { dataset, example, fieldPart, filePart, postMultipart, rawUpload, recordedKeys, sdk, storedNames, tempDataDir, waitFor, BOUNDARY } from './helpers';
import { sha256 } from '../support/streams';
import { expectError } from '../support/expect';

let gw: TestGateway;
let data: { dir: string; remove(): Promise<void> };
let client: OpenAI;

beforeAll(async () => {
  data = await tempDataDir();
  gw = await startTestGateway({ DATA_DIR: data.dir });
  client = sdk(gw);
});
afterAll(async () => {
  await gw.stop();
  await data.remove();
});

const fileCount = () => gw.gateway.services.db.prisma.file.count();

/** Nothing on disk that the database does not know, and no temporary files. */
async function expectNothingStray(): Promise<void> {
  expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
}

describe('files with the official OpenAI SDK', () => {
  it('uploads, lists, retrieves, downloads and deletes a dataset', async () => {
    const content = dataset(12);
    const created = await client.files.create({ file: await toFile(Buffer.from(content), 'train.jsonl'), purpose: 'fine-tune' });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'file',
      bytes: Buffer.byteLength(content),
      created_at: expect.any(Number),
      filename: 'train.jsonl',
      purpose: 'fine-tune',
      status: 'processed',
      status_details: null,
    });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(60);

    // The gateway keeps the size and hash, and the bytes under DATA_DIR/files.
    const model = await gw.gateway.services.files.get(await gw.gateway.services.workspaces.resolveScope(await callerOf(gw)), created.id);
    expect(model).toMatchObject({ id: created.id, bytes: created.bytes, sha256: sha256(content), filename: 'train.jsonl', purpose: 'fine-tune' });
    expect(await storedNames(data.dir)).toContain(model.storageKey);

    expect(await client.files.retrieve(created.id)).toEqual(created);

    const listed = await client.files.list({ purpose: 'fine-tune' });
    expect(listed.data.map((f) => f.id)).toContain(created.id);

    const download = await client.files.content(created.id);
    expect(download.headers.get('content-length')).toBe(String(Buffer.byteLength(content)));
    expect(download.headers.get('content-type')).toMatch(/^application\/(jsonl|octet-stream)/);
    expect(await download.text()).toBe(content);

    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.files.content(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.files.delete(created.id)).rejects.toMatchObject({ status: 404 });
    expect(await storedNames(data.dir)).not.toContain(model.storageKey);
    await expectNothingStray();
  });

  it('pages with limit, order and after, and the SDK auto-paginates', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const file = await client.files.create({ file: await toFile(Buffer.from(`{"n": ${i}}\n`), `batch-${i}.jsonl`), purpose: 'user_data' });
      ids.push(file.id);
    }
    const first = await api(gw, 'GET', '/v1/files?purpose=user_data&limit=2&order=asc');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ object: 'list', data: expect.any(Array), first_id: ids[0], last_id: ids[1], has_more: true });
    expect(first.body.data.map((f: any) => f.id)).toEqual(ids.slice(0, 2));

    const next = await api(gw, 'GET', `/v1/files?purpose=user_data&limit=2&order=asc&after=${ids[1]}`);
    expect(next.body.data.map((f: any) => f.id)).toEqual(ids.slice(2, 4));
    const last = await api(gw, 'GET', `/v1/files?purpose=user_data&limit=2&order=asc&after=${ids[3]}`);
    expect(last.body).toMatchObject({ first_id: ids[4], last_id: ids[4], has_more: false });

    // Default order is newest first.
    const desc = await api(gw, 'GET', '/v1/files?purpose=user_data');
    expect(desc.body.data.map((f: any) => f.id)).toEqual([...ids].reverse());

    const seen: string[] = [];
    for await (const file of client.files.list({ purpose: 'user_data', limit: 2, order: 'asc' })) seen.push(file.id);
    expect(seen).toEqual(ids);

    const empty = await api(gw, 'GET', '/v1/files?purpose=evals');
    expect(empty.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses list parameters out of range', async () => {
    for (const query of ['limit=0', 'limit=10001', 'limit=abc', 'order=up', 'purpose=nonsense', 'after=3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10', 'sort=name']) {
      const res = await api(gw, 'GET', `/v1/files?${query}`);
      expectError(res, 400, { type: 'invalid_request_error', param: query.split('=')[0] });
    }
  });
});

describe('POST /v1/files multipart handling', () => {
  it('accepts purpose before or after the file', async () => {
    const content = dataset(10);
    const purposeFirst = await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'fine-tune'), filePart(content, 'first.jsonl')]);
    const fileFirst = await postMultipart(gw, '/v1/files', [filePart(content, 'second.jsonl'), fieldPart('purpose', 'fine-tune')]);
    for (const [res, filename] of [
      [purposeFirst, 'first.jsonl'],
      [fileFirst, 'second.jsonl'],
    ] as const) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'file', filename, purpose: 'fine-tune', bytes: Buffer.byteLength(content), status: 'processed' });
      const downloaded = await gatewayFetch(`${gw.url}/v1/files/${res.body.id}/content`, { headers: { 'x-gateway-api-key': gw.key } });
      expect(await downloaded.text()).toBe(content);
    }
    await expectNothingStray();
  });

  it('keeps binary content byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256));
    const res = await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'vision'), filePart(bytes, 'pixels.bin')]);
    expect(res.status).toBe(200);
    const downloaded = await gatewayFetch(`${gw.url}/v1/files/${res.body.id}/content`, { headers: { 'x-gateway-api-key': gw.key } });
    expect(downloaded.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('refuses a missing or unknown purpose, a missing file and unknown fields, keeping nothing', async () => {
    const before = await fileCount();
    expectError(await postMultipart(gw, '/v1/files', [filePart(dataset())]), 400, { type: 'invalid_request_error', param: 'purpose' });
    expectError(await postMultipart(gw, '/v1/files', [filePart(dataset()), fieldPart('purpose', 'fine_tune')]), 400, {
      type: 'invalid_request_error',
      param: 'purpose',
    });
    expectError(await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'fine-tune')]), 400, { type: 'invalid_request_error', param: 'file' });
    expectError(await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'user_data'), fieldPart('colour', 'red'), filePart('x')]), 400, {
      type: 'invalid_request_error',
      param: 'colour',
    });
    expectError(await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'user_data'), filePart('')]), 400, { type: 'invalid_request_error', param: 'file' });
    const json = await api(gw, 'POST', '/v1/files', { body: { purpose: 'user_data' } });
    expectError(json, 415, { type: 'invalid_request_error' });
    expect(await fileCount()).toBe(before);
    await expectNothingStray();
  });

  describe('refuses invalid fine-tune datasets with 400 naming the line, keeping nothing', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => example(i + 1));
    const cases: Array<[string, Buffer, RegExp]> = [
      ['a line that is not JSON', Buffer.from([...lines(3), '{"messages": [', ...lines(8)].join('\n')), /line 4: invalid JSON/],
      [
        'an example without an assistant message',
        Buffer.from([...lines(1), JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }), ...lines(10)].join('\n')),
        /line 2: no assistant message/,
      ],
      ['fewer than 10 examples', Buffer.from(lines(9).join('\n')), /9 examples; at least 10 are required/],
      [
        'bytes that are not UTF-8',
        Buffer.concat([Buffer.from(lines(4).join('\n') + '\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), Buffer.from(lines(8).join('\n'))]),
        /line 5: invalid UTF-8/,
      ],
    ];

    it.each(cases)('%s', async (_name, content, reason) => {
      const before = await fileCount();
      for (const parts of [
        [fieldPart('purpose', 'fine-tune'), filePart(content)],
        [filePart(content), fieldPart('purpose', 'fine-tune')],
      ]) {
        const res = await postMultipart(gw, '/v1/files', parts);
        expectError(res, 400, { type: 'invalid_request_error', param: 'file' });
        expect(res.body.error.code).toBe('invalid_dataset');
        expect(res.body.error.message).toMatch(reason);
      }
      // Through the SDK too.
      const err = await client.files.create({ file: await toFile(content, 'bad.jsonl'), purpose: 'fine-tune' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(reason);
      expect(await fileCount()).toBe(before);
      await expectNothingStray();
    });

    it('the same bytes are fine for a purpose that is not fine-tune', async () => {
      const res = await postMultipart(gw, '/v1/files', [filePart('not json at all\n'), fieldPart('purpose', 'user_data')]);
      expect(res.status).toBe(200);
    });
  });

  it('an upload cut off mid-stream leaves no row and no file', async () => {
    const before = await fileCount();
    const body = Buffer.concat([fieldPart('purpose', 'fine-tune'), filePart(dataset(2000)), Buffer.from(`--${BOUNDARY}--\r\n`)]);
    const socket = await rawUpload(gw, body.length);
    socket.write(body.subarray(0, Math.floor(body.length / 2)));
    // The upload is streaming into a temporary file when the client goes away.
    await waitFor(async () => (await storedNames(data.dir)).some((name) => name.endsWith('.tmp')), 'the upload to reach the store');
    socket.destroy();
    await waitFor(async () => !(await storedNames(data.dir)).some((name) => name.endsWith('.tmp')), 'the temporary file to go');
    // Give a wrongly surviving request the chance to write a row before we look.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await fileCount()).toBe(before);
    await expectNothingStray();
    // The gateway is still serving.
    expect((await api(gw, 'GET', '/v1/files?limit=1')).status).toBe(200);
  });

  it('an upload whose file arrived whole but whose purpose never did leaves nothing', async () => {
    const before = await fileCount();
    const head = Buffer.concat([filePart(dataset(10)), Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine`)]);
    const socket = await rawUpload(gw, head.length + 100);
    socket.write(head);
    // The whole file is stored (renamed into place) while the request waits for its fields.
    const unrecorded = async () => {
      const known = await recordedKeys(gw);
      return (await storedNames(data.dir)).filter((name) => !name.startsWith('.') && !known.includes(name));
    };
    await waitFor(async () => (await unrecorded()).length > 0, 'the file to be stored');
    socket.destroy();
    await waitFor(async () => (await storedNames(data.dir)).join() === (await recordedKeys(gw)).join(), 'the stored file to be discarded');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await fileCount()).toBe(before);
    await expectNothingStray();
  });

  it('keeps only the base name of a filename sent with a path', async () => {
    const res = await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'user_data'), filePart('{}\n', 'C:\\data\\sets\\named.jsonl')]);
    expect(res.status).toBe(200);
    expect(res.body.filename).toBe('named.jsonl');
    const disposition = await gatewayFetch(`${gw.url}/v1/files/${res.body.id}/content`, { headers: { 'x-gateway-api-key': gw.key } });
    expect(disposition.headers.get('content-disposition')).toBe(`attachment; filename="named.jsonl"; filename*=UTF-8''named.jsonl`);
  });

  it('never hosts a client-mode upload (x-gateway-provider): an unknown integration is 404 and nothing is kept', async () => {
    const before = await fileCount();
    const upload = await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'fine-tune'), filePart(dataset())], {
      'x-gateway-provider': '@no-such-integration',
    });
    expectError(upload, 404, { type: 'not_found_error', param: 'x-gateway-provider' });
    const list = await api(gw, 'GET', '/v1/files', { headers: { 'x-gateway-provider': 'not-a-provider' } });
    expectError(list, 400, { type: 'invalid_request_error', param: 'x-gateway-provider' });
    expect(await fileCount()).toBe(before);
    await expectNothingStray();
  });

  it('ignores the Authorization header the SDK always sends', async () => {
    const res = await api(gw, 'GET', '/v1/files?limit=1', { headers: { authorization: 'Bearer whatever' } });
    expect(res.status).toBe(200);
  });
});

describe('tenancy', () => {
  it("another organisation's or workspace's file answers 404, exactly like a missing one", async () => {
    const mine = await client.files.create({ file: await toFile(Buffer.from('{}\n'), 'mine.jsonl'), purpose: 'user_data' });

    const other = await createOrganisation(gw);
    const theirs = sdk(other);
    await expect(theirs.files.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.files.content(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(theirs.files.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await theirs.files.list()).data).toEqual([]);

    const workspace = await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Second', slug: 'second' } });
    expect(workspace.status).toBe(200);
    const elsewhere = await api(gw, 'GET', `/v1/files/${mine.id}?workspace_id=second`);
    expectError(elsewhere, 404, { type: 'not_found_error' });
    expect((await api(gw, 'GET', '/v1/files?workspace_id=second')).body.data).toEqual([]);

    // An upload may name its workspace in the query or as a form field.
    const inSecond = await postMultipart(gw, '/v1/files', [
      filePart('{}\n', 'second.jsonl'),
      fieldPart('purpose', 'user_data'),
      fieldPart('workspace_id', 'second'),
    ]);
    expect(inSecond.status).toBe(200);
    expect((await api(gw, 'GET', `/v1/files/${inSecond.body.id}?workspace_id=second`)).status).toBe(200);
    expectError(await api(gw, 'GET', `/v1/files/${inSecond.body.id}`), 404, { type: 'not_found_error' });
    const unknown = await postMultipart(gw, '/v1/files?workspace_id=nowhere', [fieldPart('purpose', 'user_data'), filePart('{}\n')]);
    expectError(unknown, 404, { type: 'not_found_error' });

    expectError(await api(gw, 'GET', '/v1/files/not-a-uuid'), 404, { type: 'not_found_error' });
    await expectNothingStray();
  });
});

describe('upload size limit', () => {
  const LIMIT = 4096;
  let small: TestGateway;
  let smallData: { dir: string; remove(): Promise<void> };

  beforeAll(async () => {
    smallData = await tempDataDir();
    small = await startTestGateway({ DATA_DIR: smallData.dir, GATEWAY_UPLOAD_LIMIT_BYTES: String(LIMIT) });
  });
  afterAll(async () => {
    await small.stop();
    await smallData.remove();
  });

  it('accepts exactly the limit and answers 413 beyond it, keeping nothing', async () => {
    const exact = await postMultipart(small, '/v1/files', [fieldPart('purpose', 'user_data'), filePart(Buffer.alloc(LIMIT, 'a'))]);
    expect(exact.status).toBe(200);
    expect(exact.body.bytes).toBe(LIMIT);

    for (const size of [LIMIT + 1, LIMIT * 50]) {
      for (const parts of [
        [fieldPart('purpose', 'user_data'), filePart(Buffer.alloc(size, 'a'))],
        [filePart(Buffer.alloc(size, 'a')), fieldPart('purpose', 'user_data')],
      ]) {
        const res = await postMultipart(small, '/v1/files', parts);
        expectError(res, 413, { type: 'invalid_request_error', param: 'file' });
        expect(res.body.error.code).toBe('file_too_large');
      }
    }
    const err = await sdk(small)
      .files.create({ file: await toFile(Buffer.alloc(LIMIT * 2, 'b'), 'big.jsonl'), purpose: 'user_data' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 413 });

    expect(await small.gateway.services.db.prisma.file.count()).toBe(1);
    expect(await storedNames(smallData.dir)).toEqual(await recordedKeys(small));
  });
});

async function callerOf(g: TestGateway) {
  return g.gateway.services.apiKeys.authenticate(g.key);
}
