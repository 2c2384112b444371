import { gatewayFetch } from '../support/answers';
import { api, createOrganisation, gql, startTestGateway, type TestGateway } from '../support/gateway';
import { dataset, example, recordedKeys, storedNames, tempDataDir } from './helpers';

let gw: TestGateway;
let data: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  data = await tempDataDir();
  gw = await startTestGateway({ DATA_DIR: data.dir, GATEWAY_UPLOAD_LIMIT_BYTES: String(64 * 1024) });
});
afterAll(async () => {
  await gw.stop();
  await data.remove();
});

const FILE_FIELDS = 'id filename purpose bytes sha256 status organisationId workspaceId createdAt';
const UPLOAD = `mutation($file: Upload!, $purpose: FilePurpose!) { uploadFile(file: $file, purpose: $purpose) { ${FILE_FIELDS} } }`;

/** A GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec). */
async function upload(
  target: { url: string; key: string },
  content: string | Buffer,
  purpose: string,
  options: { filename?: string; preflight?: boolean } = {},
) {
  const body = new FormData();
  body.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null, purpose } }));
  body.append('map', JSON.stringify({ 0: ['variables.file'] }));
  body.append(
    '0',
    new File([typeof content === 'string' ? content : new Uint8Array(content)], options.filename ?? 'train.jsonl', { type: 'application/jsonl' }),
  );
  const headers: Record<string, string> = { 'x-gateway-api-key': target.key };
  if (options.preflight !== false) headers['apollo-require-preflight'] = 'true';
  const res = await fetch(`${target.url}/graphql`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
}

const fileCount = () => gw.gateway.services.db.prisma.file.count();

describe('files over GraphQL', () => {
  it('uploads a dataset with a real multipart request; REST sees the same file', async () => {
    const content = dataset(10);
    const res = await upload(gw, content, 'FINE_TUNE');
    expect(res.body.errors).toBeUndefined();
    const file = res.body.data.uploadFile;
    expect(file).toMatchObject({ filename: 'train.jsonl', purpose: 'FINE_TUNE', bytes: Buffer.byteLength(content), status: 'processed' });
    expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);

    const rest = await api(gw, 'GET', `/v1/files/${file.id}`);
    expect(rest.body).toMatchObject({ id: file.id, purpose: 'fine-tune', bytes: file.bytes, created_at: Math.floor(Date.parse(file.createdAt) / 1000) });
    const content2 = await gatewayFetch(`${gw.url}/v1/files/${file.id}/content`, { headers: { 'x-gateway-api-key': gw.key } });
    expect(await content2.text()).toBe(content);

    const read = await gql(gw, `query($id: ID!) { file(id: $id) { id purpose bytes } }`, { id: file.id });
    expect(read.body.data.file).toEqual({ id: file.id, purpose: 'FINE_TUNE', bytes: file.bytes });
  });

  it('refuses an invalid dataset with BAD_USER_INPUT naming the line, keeping nothing', async () => {
    const before = await fileCount();
    const bad = [example(1), '{"messages": "nope"}', ...Array.from({ length: 10 }, (_, i) => example(i + 2))].join('\n');
    const res = await upload(gw, bad, 'FINE_TUNE');
    expect(res.body.errors[0].message).toMatch(/line 2: /);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'file', errorCode: 'invalid_dataset' });
    expect(await fileCount()).toBe(before);
    expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
  });

  it('refuses a file over the upload limit, keeping nothing', async () => {
    const before = await fileCount();
    const res = await upload(gw, Buffer.alloc(64 * 1024 + 1, 'x'), 'USER_DATA', { filename: 'big.bin' });
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errorCode: 'file_too_large', status: 413 });
    const huge = await upload(gw, Buffer.alloc(1024 * 1024, 'x'), 'USER_DATA', { filename: 'huge.bin' });
    expect(huge.body.errors[0].extensions).toMatchObject({ errorCode: 'file_too_large' });
    const exact = await upload(gw, Buffer.alloc(64 * 1024, 'x'), 'USER_DATA', { filename: 'exact.bin' });
    expect(exact.body.errors).toBeUndefined();
    expect(exact.body.data.uploadFile.bytes).toBe(64 * 1024);
    expect(await fileCount()).toBe(before + 1);
    expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
  });

  it('needs the CSRF preflight header and a valid purpose', async () => {
    const before = await fileCount();
    const noPreflight = await upload(gw, dataset(), 'FINE_TUNE', { preflight: false });
    expect(noPreflight.status).toBe(400);
    const badPurpose = await upload(gw, dataset(), 'fine-tune');
    expect(badPurpose.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await fileCount()).toBe(before);
    expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
  });

  it('pages files newest first with hasMore, filters by purpose, and deletes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await upload(gw, `{"i": ${i}}\n`, 'EVALS', { filename: `eval-${i}.jsonl` });
      ids.push(res.body.data.uploadFile.id);
    }
    const first = await gql(gw, `{ files(purpose: "EVALS", limit: 2) { hasMore items { id purpose } } }`);
    expect(first.body.data.files).toEqual({
      hasMore: true,
      items: [
        { id: ids[2], purpose: 'EVALS' },
        { id: ids[1], purpose: 'EVALS' },
      ],
    });
    const rest = await gql(gw, `query($after: String) { files(purpose: "evals", limit: 2, after: $after) { hasMore items { id } } }`, { after: ids[1] });
    expect(rest.body.data.files).toEqual({ hasMore: false, items: [{ id: ids[0] }] });

    const tooMany = await gql(gw, `{ files(limit: 101) { hasMore } }`);
    expect(tooMany.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'limit' });
    const badPurpose = await gql(gw, `{ files(purpose: "nonsense") { hasMore } }`);
    expect(badPurpose.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'purpose' });

    const deleted = await gql(gw, `mutation($id: ID!) { deleteFile(id: $id) }`, { id: ids[0] });
    expect(deleted.body.data.deleteFile).toBe(true);
    const gone = await gql(gw, `query($id: ID!) { file(id: $id) { id } }`, { id: ids[0] });
    expect(gone.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(await storedNames(data.dir)).toEqual(await recordedKeys(gw));
  });

  it("another organisation's file is NOT_FOUND", async () => {
    const mine = (await upload(gw, '{}\n', 'USER_DATA')).body.data.uploadFile;
    const other = await createOrganisation(gw);
    const read = await gql(other, `query($id: ID!) { file(id: $id) { id } }`, { id: mine.id });
    expect(read.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const del = await gql(other, `mutation($id: ID!) { deleteFile(id: $id) }`, { id: mine.id });
    expect(del.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await gql(other, `{ files { items { id } } }`)).body.data.files.items).toEqual([]);
    const theirs = (await upload(other, '{}\n', 'USER_DATA')).body.data.uploadFile;
    expect(theirs.organisationId).toBe(other.organisationId);
  });
});
