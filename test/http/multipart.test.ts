/**
 * Multipart uploads through the real path: HTTP `POST /v1/files` on a running gateway, the real
 * receiveMultipartUpload, FileService.stage/commit and the local file store. Every refusal leaves
 * the database and the store exactly as they were.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { MAX_FILENAME_LENGTH } from '../../src/modules/files/file.schemas';
import { BOUNDARY, dataset, example, fieldPart, filePart, postMultipart, recordedKeys, storedNames, tempDataDir, waitFor } from '../files/helpers';
import { gatewayFetch } from '../support/answers';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { sha256 } from '../support/streams';
import { expectError } from '../support/expect';

const MAX_FILE_BYTES = 64 * 1024;

let gw: TestGateway;
let data: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  data = await tempDataDir('gw-multipart-');
  gw = await startTestGateway({ DATA_DIR: data.dir, GATEWAY_UPLOAD_LIMIT_BYTES: String(MAX_FILE_BYTES) });
});
afterAll(async () => {
  await gw.stop();
  await data.remove();
});
afterEach(() => jest.restoreAllMocks());

/** The file rows and what the store holds (stored objects and temporary files). */
async function storeAndDatabase() {
  return { recorded: await recordedKeys(gw), stored: await storedNames(data.dir) };
}

/** Runs `refuse`, which must leave no row, no stored object and no temporary file behind. */
async function expectNothingKept(refuse: () => Promise<void>): Promise<void> {
  const before = await storeAndDatabase();
  expect(before.stored).toEqual(before.recorded);
  await refuse();
  expect(await storeAndDatabase()).toEqual(before);
}

/** An upload built by fetch's own FormData encoder, as browsers and SDKs send it. */
async function postForm(...parts: Array<[string, string | File]>) {
  const body = new FormData();
  for (const [name, value] of parts) body.append(name, value);
  const res = await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key }, body });
  return { status: res.status, body: await res.json() };
}

const jsonl = (content: string | Buffer, name = 'train.jsonl') =>
  new File([typeof content === 'string' ? content : new Uint8Array(content)], name, { type: 'application/jsonl' });

async function download(id: string): Promise<Buffer> {
  const res = await gatewayFetch(`${gw.url}/v1/files/${id}/content`, { headers: { 'x-gateway-api-key': gw.key } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('accepted uploads', () => {
  it('stores the file with purpose first, recording its size and hash', async () => {
    const content = dataset(10);
    const res = await postForm(['purpose', 'fine-tune'], ['file', jsonl(content, 'données ✓.jsonl')]);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'file', filename: 'données ✓.jsonl', purpose: 'fine-tune', bytes: Buffer.byteLength(content) });
    const row = await gw.gateway.services.db.prisma.file.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row).toMatchObject({ sha256: sha256(content), bytes: BigInt(Buffer.byteLength(content)) });
    expect((await download(res.body.id)).toString()).toBe(content);
    expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
  });

  it('stores the file when purpose comes after it', async () => {
    const content = dataset(10);
    const res = await postMultipart(gw, '/v1/files', [filePart(content), fieldPart('purpose', 'fine-tune')]);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ purpose: 'fine-tune', bytes: Buffer.byteLength(content) });
    expect((await download(res.body.id)).toString()).toBe(content);
  });

  it('accepts a file of exactly the size limit', async () => {
    const exact = Buffer.alloc(MAX_FILE_BYTES, 'a');
    const res = await postMultipart(gw, '/v1/files', [filePart(exact, 'exact.bin'), fieldPart('purpose', 'user_data')]);

    expect(res.status).toBe(200);
    expect(res.body.bytes).toBe(MAX_FILE_BYTES);
    expect((await download(res.body.id)).equals(exact)).toBe(true);
  });

  it.each<[string, string, string]>([
    ['keeps only the base name of a Windows path', 'C:\\data\\sets\\named.jsonl', 'named.jsonl'],
    ['keeps only the base name of a Unix path', '../../etc/named.jsonl', 'named.jsonl'],
    ['names a file whose name is only a directory "file"', 'folder/', 'file'],
    ['trims surrounding spaces', '  spaced.jsonl  ', 'spaced.jsonl'],
    ['keeps a name of exactly the maximum length', 'n'.repeat(MAX_FILENAME_LENGTH), 'n'.repeat(MAX_FILENAME_LENGTH)],
  ])('%s', async (_case, sent, kept) => {
    const res = await postMultipart(gw, '/v1/files', [fieldPart('purpose', 'user_data'), filePart('{}\n', sent)]);

    expect(res.status).toBe(200);
    expect(res.body.filename).toBe(kept);
  });
});

describe('refused uploads keep nothing', () => {
  it.each<[string, Buffer[], number, { param?: string | null; code?: string | null; message?: string | RegExp }]>([
    ['a missing purpose', [filePart(dataset(10))], 400, { param: 'purpose', message: /purpose: is required/ }],
    ['an unknown purpose, after the file', [filePart(dataset(10)), fieldPart('purpose', 'fine_tune')], 400, { param: 'purpose' }],
    ['a missing file part', [fieldPart('purpose', 'user_data')], 400, { param: 'file', message: /'file' is required/ }],
    ['a text field in place of the file', [fieldPart('file', 'just text'), fieldPart('purpose', 'user_data')], 400, { param: 'file' }],
    [
      'a second file, discarding the first',
      [filePart('{}\n', 'one.jsonl'), filePart('{}\n', 'two.jsonl'), fieldPart('purpose', 'user_data')],
      400,
      { param: 'file', message: 'Only one file may be uploaded per request' },
    ],
    [
      'an unknown field after the file, naming it',
      [filePart('{}\n'), fieldPart('purpose', 'user_data'), fieldPart('colour', 'blue')],
      400,
      { param: 'colour', message: "Unknown field 'colour'" },
    ],
    ['a repeated field', [fieldPart('purpose', 'user_data'), fieldPart('purpose', 'fine-tune'), filePart('{}\n')], 400, { param: 'purpose' }],
    ['a field value over 16 KiB', [filePart('{}\n'), fieldPart('purpose', 'b'.repeat(17 * 1024))], 400, { param: 'purpose', message: /too long/ }],
    ['a file field under another name', [fieldPart('purpose', 'user_data'), filePart('{}\n', 'x.jsonl', 'upload')], 400, { param: 'upload' }],
    ['an empty file', [fieldPart('purpose', 'user_data'), filePart('')], 400, { param: 'file', code: 'empty_file' }],
    [
      'a filename with a control character',
      [fieldPart('purpose', 'user_data'), filePart('{}\n', 'tab\there.jsonl')],
      400,
      { param: 'file', code: 'invalid_filename' },
    ],
    [
      'a part header the parser cannot read',
      [fieldPart('purpose', 'user_data'), filePart('{}\n', 'bad\u0001name.jsonl')],
      400,
      { message: /Malformed part header/ },
    ],
    // busboy reads a part whose filename is empty as a text field.
    ['a file part with an empty filename', [fieldPart('purpose', 'user_data'), filePart('{}\n', '')], 400, { param: 'file', message: /must be a file/ }],
    [
      'a filename over the maximum length',
      [fieldPart('purpose', 'user_data'), filePart('{}\n', 'n'.repeat(MAX_FILENAME_LENGTH + 1))],
      400,
      { code: 'invalid_filename' },
    ],
    [
      'an invalid fine-tune dataset, naming the lines',
      [filePart([example(1), '{"messages": [{"role": "bot", "content": "x"}]}', '', 'nope'].join('\n')), fieldPart('purpose', 'fine-tune')],
      400,
      { param: 'file', code: 'invalid_dataset', message: /line 2: .*"bot".*line 4: invalid JSON/ },
    ],
    [
      'a file over the size limit, purpose first (413 reaches the client because the rest is drained)',
      [fieldPart('purpose', 'user_data'), filePart(Buffer.alloc(MAX_FILE_BYTES * 16, 'x'))],
      413,
      { param: 'file', code: 'file_too_large', message: 'File exceeds the maximum size of 65536 bytes' },
    ],
    [
      'a file one byte over the size limit, purpose last',
      [filePart(Buffer.alloc(MAX_FILE_BYTES + 1, 'x')), fieldPart('purpose', 'user_data')],
      413,
      { code: 'file_too_large' },
    ],
    [
      'a workspace_id field naming no workspace, after the file',
      [filePart('{}\n'), fieldPart('purpose', 'user_data'), fieldPart('workspace_id', 'nowhere')],
      404,
      {},
    ],
  ])('%s', async (_case, parts, status, expected) => {
    await expectNothingKept(async () => expectError(await postMultipart(gw, '/v1/files', parts), status, expected));
  });

  it('a body that is not multipart: 415', async () => {
    await expectNothingKept(async () => {
      const res = await gatewayFetch(`${gw.url}/v1/files`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gw.key, 'content-type': 'application/json' },
        body: JSON.stringify({ purpose: 'user_data' }),
      });
      expectError({ status: res.status, body: await res.json() }, 415);
    });
  });

  it('a multipart content type without a boundary: 400', async () => {
    await expectNothingKept(async () => {
      const res = await gatewayFetch(`${gw.url}/v1/files`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gw.key, 'content-type': 'multipart/form-data' },
        body: 'whatever',
      });
      expectError({ status: res.status, body: await res.json() }, 400, { message: /Malformed multipart/ });
    });
  });

  it('a complete request whose body stops mid-file, without its closing boundary: 400', async () => {
    const truncated = filePart(Buffer.alloc(20_000, 'x'));
    await expectNothingKept(async () => {
      const res = await gatewayFetch(`${gw.url}/v1/files`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gw.key, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: Buffer.concat([fieldPart('purpose', 'user_data'), truncated.subarray(0, truncated.length - 5_000)]),
      });
      expectError({ status: res.status, body: await res.json() }, 400);
    });
  });
});

describe('when the client hangs up mid-upload', () => {
  const port = () => Number(new URL(gw.url).port);

  /** Sends the request head and the first `sent` bytes of `body`, then waits for `ready` and drops the connection. */
  async function hangUpAfter(body: Buffer, sent: number, ready: () => Promise<boolean>): Promise<void> {
    const socket = connect(port(), '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(
      `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nx-gateway-api-key: ${gw.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.subarray(0, sent));
    await waitFor(ready, 'the upload to reach the store');
    socket.destroy();
  }

  it('mid-file: staging fails as aborted and its temporary file is removed', async () => {
    const files = gw.gateway.services.files;
    const stage = jest.spyOn(files, 'stage');
    const commit = jest.spyOn(files, 'commit');
    const body = Buffer.concat([fieldPart('purpose', 'user_data'), filePart(Buffer.alloc(40_000, 'd'), 'big.jsonl'), Buffer.from(`--${BOUNDARY}--\r\n`)]);

    await expectNothingKept(async () => {
      await hangUpAfter(body, body.length / 2, async () => (await storedNames(data.dir)).some((name) => name.endsWith('.tmp')));
      // stage() settles only after the store has removed its temporary file.
      await expect(stage.mock.results[0].value).rejects.toMatchObject({ code: 'upload_aborted' });
    });
    expect(stage).toHaveBeenCalledTimes(1);
    expect(commit).not.toHaveBeenCalled();
  });

  it('after the file, while a field is still arriving: the stored file is discarded', async () => {
    const files = gw.gateway.services.files;
    const discard = jest.spyOn(files, 'discard');
    const commit = jest.spyOn(files, 'commit');
    const head = Buffer.concat([filePart(dataset(10)), Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine`)]);
    const body = Buffer.concat([head, Buffer.from(`-tune\r\n--${BOUNDARY}--\r\n`)]);
    const unrecorded = async () => {
      const { recorded, stored } = await storeAndDatabase();
      return stored.filter((name) => !name.startsWith('.') && !recorded.includes(name));
    };

    await expectNothingKept(async () => {
      // The file part is complete (renamed into place in the store); purpose is cut off.
      await hangUpAfter(body, head.length, async () => (await unrecorded()).length > 0);
      await waitFor(async () => discard.mock.calls.length > 0, 'the upload to be discarded');
      await discard.mock.results[0].value;
    });
    const [staged] = discard.mock.calls[0];
    expect(staged.bytes).toBe(Buffer.byteLength(dataset(10)));
    expect(commit).not.toHaveBeenCalled();
  });
});
