/**
 * Multipart limits beyond busboy's own, on both faces: a request may have at most
 * GATEWAY_MULTIPART_MAX_PARTS parts (empty ones and ones without a name included) and carry at most
 * GATEWAY_MULTIPART_MAX_NON_FILE_BYTES besides the file's content. Refusals are 413 in each face's
 * shape and keep nothing; the file itself may be as large as the upload limit allows.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BOUNDARY, closing, dataset, fieldPart, filePart, recordedKeys, storedNames, tempDataDir } from '../files/helpers';
import { assertDocumentedAnswer } from '../support/openapi';
import { startTestGateway, type TestGateway } from '../support/gateway';

const NON_FILE_LIMIT = 64 * 1024;

let gw: TestGateway;
let data: { dir: string; remove(): Promise<void> };
beforeAll(async () => {
  data = await tempDataDir('gw-multipart-limits-');
  gw = await startTestGateway({ DATA_DIR: data.dir, GATEWAY_MULTIPART_MAX_PARTS: '6', GATEWAY_MULTIPART_MAX_NON_FILE_BYTES: String(NON_FILE_LIMIT) });
});
afterAll(async () => {
  await gw.stop();
  await data.remove();
});

/** A part with no Content-Disposition: busboy skips it without a word. */
const anonymousPart = (content = '') => Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\n${content}\r\n`);
const emptyParts = (count: number) => Array.from({ length: count }, () => anonymousPart());

async function post(path: string, parts: Buffer[], headers: Record<string, string> = {}) {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gw.key, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body: Buffer.concat([...parts, closing()]),
  });
  const body = await res.json();
  if (path.startsWith('/v1/')) assertDocumentedAnswer('POST', path, res.status, res.headers.get('content-type'), body);
  return { status: res.status, body };
}

/** A GraphQL multipart upload (operations, map, the file), with `extra` parts where the spec has none. */
function graphqlParts(file: Buffer[], extra: Buffer[] = []): Buffer[] {
  const operations = { query: 'mutation($f: Upload!) { uploadFile(file: $f, purpose: FINE_TUNE) { id bytes } }', variables: { f: null } };
  return [fieldPart('operations', JSON.stringify(operations)), fieldPart('map', JSON.stringify({ 0: ['variables.f'] })), ...extra, ...file];
}
const postGraphql = (parts: Buffer[]) => post('/graphql', parts, { 'apollo-require-preflight': 'true' });

const nothingKept = async () => expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));

/**
 * Refused either before Apollo (413, PAYLOAD_TOO_LARGE) or, when the limit is passed after the
 * operations were read, by the upload the resolver awaits (its error names the limit).
 */
function expectGraphqlRefusal(res: { status: number; body: any }, message: string, errorCode: string) {
  const [error] = res.body.errors;
  expect(error.message).toBe(message);
  if (res.status === 413) expect(error.extensions.code).toBe('PAYLOAD_TOO_LARGE');
  else expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode, status: 413 });
  expect(res.body.data?.uploadFile ?? null).toBeNull();
}

describe('REST uploads (POST /v1/files)', () => {
  it('refuses a request of thousands of empty parts with 413 too_many_parts', async () => {
    const res = await post('/v1/files', emptyParts(10_000));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'too_many_parts', message: 'A multipart request may have at most 6 parts' });
    await nothingKept();
  });

  it('counts parts after the file too', async () => {
    const res = await post('/v1/files', [fieldPart('purpose', 'fine-tune'), filePart(dataset(10)), ...emptyParts(5)]);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('too_many_parts');
    await nothingKept();
  });

  it('accepts as many parts as the limit', async () => {
    const res = await post('/v1/files', [fieldPart('purpose', 'fine-tune'), ...emptyParts(4), filePart(dataset(10))]);
    expect(res.status).toBe(200);
  });

  it('refuses bytes besides the file past the limit (a part nobody reads) with 413 multipart_too_large', async () => {
    const res = await post('/v1/files', [fieldPart('purpose', 'fine-tune'), anonymousPart('x'.repeat(4 * NON_FILE_LIMIT)), filePart(dataset(10))]);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'multipart_too_large', message: 'A multipart request may carry at most 65536 bytes besides the file' });
    await nothingKept();
  });

  it('does not count the file: one far larger than the non-file limit is stored', async () => {
    const content = dataset(3000);
    expect(content.length).toBeGreaterThan(4 * NON_FILE_LIMIT);
    const res = await post('/v1/files', [fieldPart('purpose', 'fine-tune'), filePart(content)]);
    expect(res.status).toBe(200);
    expect(res.body.bytes).toBe(Buffer.byteLength(content));
  });

  it('applies to client-mode uploads as well', async () => {
    const res = await post('/v1/files', emptyParts(100), { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test' });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('too_many_parts');
  });
});

describe('GraphQL multipart requests', () => {
  it('refuses thousands of empty parts with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await postGraphql(graphqlParts([filePart(dataset(10), 'train.jsonl', '0')], emptyParts(10_000)));
    expectGraphqlRefusal(res, 'A multipart request may have at most 6 parts', 'too_many_parts');
    await nothingKept();
  });

  it('refuses bytes besides the file past the limit', async () => {
    const res = await postGraphql(graphqlParts([filePart(dataset(10), 'train.jsonl', '0')], [anonymousPart('x'.repeat(4 * NON_FILE_LIMIT))]));
    expectGraphqlRefusal(res, 'A multipart request may carry at most 65536 bytes besides the file', 'multipart_too_large');
    await nothingKept();
  });

  it('uploads a file far larger than the non-file limit', async () => {
    const content = dataset(3000);
    const res = await postGraphql(graphqlParts([filePart(content, 'train.jsonl', '0')]));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.uploadFile.bytes).toBe(Buffer.byteLength(content));
  });
});

describe('files on disk', () => {
  it('are private to the gateway: DATA_DIR/files 0700, each file 0600', async () => {
    const res = await post('/v1/files', [fieldPart('purpose', 'fine-tune'), filePart(dataset(10))]);
    expect(res.status).toBe(200);
    const [name] = await storedNames(data.dir);
    expect((await stat(join(data.dir, 'files'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(data.dir, 'files', name))).mode & 0o777).toBe(0o600);
  });
});
