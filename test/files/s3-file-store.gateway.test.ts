/**
 * The gateway with GATEWAY_FILE_STORE=s3://… on a real S3-compatible server (s3rver): uploads land in
 * the bucket, not under DATA_DIR; refused uploads leave no object; hosted training reads from it.
 * Two replicas with separate DATA_DIRs, one Postgres and one bucket serve each other's files and jobs.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { rawUpload } from './helpers';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, createTestDatabase, dataset, eventually, newKey, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';
import { gatewayFetch } from '../support/answers';
import { api } from '../support/gateway';
import { itOnPostgres } from '../support/gateway-process';
import { startLocalS3, type LocalS3 } from '../support/s3rver';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

/** A multipart upload of `content` through fetch (the gateway streams it to the store). */
async function upload(gw: { url: string; key: string }, content: string, purpose = 'fine-tune', filename = 'train.jsonl') {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([content]), filename);
  const res = await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key }, body: form });
  return { status: res.status, body: await res.json() };
}

async function trainAndWait(gw: HostedGateway, fileId: string): Promise<any> {
  const created = await api(gw, 'POST', '/v1/fine_tuning/jobs', {
    body: { model: 'gpt-4o-mini', training_file: fileId, gateway_options: { 'x-gateway-provider': '@openai' } },
  });
  expect(created.status).toBe(200);
  return eventually(async () => {
    const job = await api(gw, 'GET', `/v1/fine_tuning/jobs/${created.body.id}`);
    return job.body.status === 'succeeded' ? job.body : undefined;
  }, 30_000);
}

let s3: LocalS3;
let fake: FakeOpenAI;
beforeAll(async () => {
  s3 = await startLocalS3();
  fake = await startFakeOpenAI({ apiKey: SECRET });
});
afterAll(async () => {
  await fake.close();
  await s3.stop();
});

it('stores uploads in the bucket, serves and trains on them, and leaves no object for a refused upload', async () => {
  const prefix = `single-${randomBytes(4).toString('hex')}`;
  const data = await tempDir('gw-s3-single-');
  const database = await createTestDatabase();
  const gw = await startHostedGateway({ fake, database, dataDir: data.dir, key: newKey(), env: { ...s3.env(prefix), GATEWAY_UPLOAD_LIMIT_BYTES: '100000' } });
  try {
    const content = dataset();
    const file = await upload(gw, content);
    expect(file.status).toBe(200);
    expect(await s3.keys(prefix)).toEqual([`${prefix}/${file.body.id}`]);
    expect(await readdir(data.dir)).not.toContain('files');

    const download = await api(gw, 'GET', `/v1/files/${file.body.id}/content`);
    expect(download.status).toBe(200);
    expect(download.body).toBe(content);

    // Refused after streaming (not a dataset), refused for size, refused for purpose: nothing stays.
    expect((await upload(gw, 'not json\n')).status).toBe(400);
    expect((await upload(gw, 'x'.repeat(100_001), 'assistants', 'big.bin')).status).toBe(413);
    expect((await upload(gw, content, 'nonsense')).status).toBe(400);
    expect(await s3.keys(prefix)).toEqual([`${prefix}/${file.body.id}`]);

    await createIntegration(gw, 'openai', SECRET);
    const job = await trainAndWait(gw, file.body.id);
    expect(job.fine_tuned_model).toBeTruthy();
    expect([...fake.state.files.values()].some((f) => f.content.toString() === content)).toBe(true);

    expect((await api(gw, 'DELETE', `/v1/files/${(await upload(gw, content)).body.id}`)).status).toBe(200);
    expect(await s3.keys(prefix)).toEqual([`${prefix}/${file.body.id}`]);
  } finally {
    await gw.stop();
    await database.drop();
    await data.remove();
  }
});

/** Sends the head of a multipart upload by hand, then `share` of its body, and hangs up. */
async function cutUpload(gw: { url: string; key: string }, content: string, share: number): Promise<void> {
  const boundary = 'gw-cut-boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  const socket = await rawUpload(gw, body.length, boundary);
  await new Promise<void>((resolve) => socket.write(body.subarray(0, Math.floor(body.length * share)), () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 500)); // parts are on their way to the store
  socket.destroy();
}

it('leaves no object for an upload cut off mid-stream, in the first part or after several', async () => {
  const prefix = `cut-${randomBytes(4).toString('hex')}`;
  const data = await tempDir('gw-s3-cut-');
  const database = await createTestDatabase();
  const gw = await startHostedGateway({ fake, database, dataDir: data.dir, key: newKey(), env: s3.env(prefix) });
  try {
    const big = dataset(150_000); // about 21 MiB: the gateway's 8 MiB parts make it a multipart upload
    expect(Buffer.byteLength(big)).toBeGreaterThan(20 * 1024 * 1024);
    await cutUpload(gw, big, 0.0001);
    await cutUpload(gw, big, 0.9); // two parts sent, the third under way
    await new Promise((resolve) => setTimeout(resolve, 1000)); // a wrongly surviving upload would complete meanwhile
    expect(await s3.keys(prefix)).toEqual([]);
    expect(await gw.gateway.services.db.prisma.file.count()).toBe(0);
    // Still serving: a whole upload of the same content is stored.
    const whole = await upload(gw, big);
    expect(whole.status).toBe(200);
    expect(await s3.keys(prefix)).toEqual([`${prefix}/${whole.body.id}`]);
  } finally {
    await gw.stop();
    await database.drop();
    await data.remove();
  }
});

itOnPostgres(
  'two replicas with separate DATA_DIRs on one Postgres and one bucket: a file uploaded to one is listed, downloaded and trained on through the other',
  async () => {
    const prefix = `replicas-${randomBytes(4).toString('hex')}`;
    const dataA = await tempDir('gw-s3-a-');
    const dataB = await tempDir('gw-s3-b-');
    const database = await createTestDatabase();
    const key = newKey();
    let a: HostedGateway | undefined;
    let b: HostedGateway | undefined;
    try {
      a = await startHostedGateway({ fake, database, dataDir: dataA.dir, key, env: s3.env(prefix) });
      b = await startHostedGateway({ fake, database, dataDir: dataB.dir, key, env: s3.env(prefix) });
      const content = dataset(20);
      const file = await upload(a, content);
      expect(file.status).toBe(200);
      await createIntegration(a, 'openai', SECRET);
      // A goes away: B alone lists, downloads, and (its job monitor) trains on A's upload.
      await a.stop();
      a = undefined;

      const list = await api(b, 'GET', '/v1/files');
      expect(list.body.data.map((f: any) => f.id)).toContain(file.body.id);
      const download = await api(b, 'GET', `/v1/files/${file.body.id}/content`);
      expect(download.status).toBe(200);
      expect(download.body).toBe(content);

      const job = await trainAndWait(b, file.body.id);
      expect(job.training_file).toBe(file.body.id);
      expect([...fake.state.files.values()].some((f) => f.content.toString() === content)).toBe(true);
      expect(b.logs.some((line) => line.includes('fine-tuning job submitted'))).toBe(true);
      // Neither replica kept the bytes on its own disk.
      for (const dir of [dataA.dir, dataB.dir]) expect(await readdir(dir).then((names) => names.filter((n) => n === 'files'))).toEqual([]);
      expect(await s3.keys(prefix)).toEqual([`${prefix}/${file.body.id}`]);
    } finally {
      await a?.stop();
      await b?.stop();
      await database.drop();
      await dataA.remove();
      await dataB.remove();
    }
  },
);
