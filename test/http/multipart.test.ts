import { createHash } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { badRequest, errorBody, GatewayError } from '../../src/errors';
import { restPath } from '../../src/http/case';
import { receiveMultipartUpload } from '../../src/http/multipart';
import {
  assertValidDataset,
  createDatasetValidator,
  type DatasetReport,
} from '../../src/modules/files/dataset-validator';
import { LocalFileStore } from '../../src/storage/local-file-store';

const MAX_FILE_BYTES = 64 * 1024;

interface StoredUpload {
  key: string;
  filename: string;
  mimeType: string;
  bytes: number;
  sha256: string;
  report: DatasetReport;
}

/** How each request ended, for tests whose client cannot read a response (it hung up). */
type Outcome = { ok: true } | { ok: false; error: unknown };

/**
 * A miniature POST /v1/files: streams the file into the store and the dataset validator at once,
 * then, with `purpose` in hand, keeps the file or deletes it.
 */
class UploadServer {
  readonly outcomes = new EventEmitter();
  private readonly server: Server;
  private seq = 0;

  constructor(private readonly store: LocalFileStore) {
    this.server = createServer((req, res) => {
      this.handle(req, res).then(
        () => this.outcomes.emit('settled', { ok: true } satisfies Outcome),
        (error: unknown) => {
          respondWithError(res, error);
          this.outcomes.emit('settled', { ok: false, error } satisfies Outcome);
        },
      );
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${this.port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { fields, file } = await receiveMultipartUpload(req, {
      maxFileBytes: MAX_FILE_BYTES,
      allowedFields: ['purpose'],
      onFile: async ({ filename, mimeType, stream }): Promise<StoredUpload> => {
        const key = `file-${++this.seq}`;
        const validator = createDatasetValidator({ minExamples: 2 });
        stream.on('data', (chunk: Buffer) => validator.write(chunk));
        const stored = await this.store.put(key, stream, { maxBytes: MAX_FILE_BYTES });
        return { key, filename, mimeType, ...stored, report: validator.finish() };
      },
      onDiscard: (stored) => this.store.delete(stored.key),
    });
    try {
      if (fields.purpose !== 'fine-tune' && fields.purpose !== 'batch') {
        throw badRequest("'purpose' must be 'fine-tune' or 'batch'", 'purpose');
      }
      if (fields.purpose === 'fine-tune') assertValidDataset(file.report);
    } catch (err) {
      await this.store.delete(file.key);
      throw err;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ fields, file }));
  }
}

function respondWithError(res: ServerResponse, error: unknown): void {
  const err = error instanceof GatewayError ? error : new GatewayError('internal', String(error));
  res.statusCode = err.status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(errorBody(err, restPath)));
}

const example = (n: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `Q${n} — ✓` },
      { role: 'assistant', content: `A${n}` },
    ],
  });
const DATASET = [1, 2, 3].map(example).join('\n') + '\n';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

const jsonlFile = (content: string | Buffer, name = 'train.jsonl') =>
  new File([typeof content === 'string' ? content : new Uint8Array(content)], name, { type: 'application/jsonl' });

function form(...parts: Array<[string, string | File]>): FormData {
  const body = new FormData();
  for (const [name, value] of parts) body.append(name, value);
  return body;
}

describe('receiveMultipartUpload', () => {
  let base: string;
  let root: string;
  let server: UploadServer;
  let url: string;

  const storedNames = () => readdir(root);

  async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function post(body: FormData | string, headers: Record<string, string> = {}) {
    const res = await fetch(`${url}/v1/files`, { method: 'POST', body, headers });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'multipart-'));
    root = join(base, 'files');
    server = new UploadServer(new LocalFileStore(root));
    url = await server.listen();
  });

  afterAll(async () => {
    await server.close();
    await rm(base, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await rm(root, { recursive: true, force: true });
    await mkdir(root, { recursive: true });
  });

  it('stores the file and returns the fields (purpose first)', async () => {
    const { status, body } = await post(form(['purpose', 'fine-tune'], ['file', jsonlFile(DATASET, 'données.jsonl')]));

    expect(status).toBe(200);
    expect(body.fields).toEqual({ purpose: 'fine-tune' });
    expect(body.file).toMatchObject({
      filename: 'données.jsonl',
      mimeType: 'application/jsonl',
      bytes: Buffer.byteLength(DATASET),
      sha256: sha256(DATASET),
      report: { examples: 3, errors: [] },
    });
    expect(await readFile(join(root, body.file.key), 'utf8')).toBe(DATASET);
  });

  it('accepts the file before purpose', async () => {
    const { status, body } = await post(form(['file', jsonlFile(DATASET)], ['purpose', 'fine-tune']));

    expect(status).toBe(200);
    expect(body.fields).toEqual({ purpose: 'fine-tune' });
    expect(await storedNames()).toEqual([body.file.key]);
  });

  it('accepts a file of exactly maxFileBytes', async () => {
    const exact = jsonlFile(Buffer.alloc(MAX_FILE_BYTES, 'a'));
    const { status, body } = await post(form(['file', exact], ['purpose', 'batch']));

    expect(status).toBe(200);
    expect(body.file.bytes).toBe(MAX_FILE_BYTES);
  });

  it('lets the caller refuse an invalid dataset after the fact, leaving nothing stored', async () => {
    const bad = [example(1), '{"messages": [{"role": "bot", "content": "x"}]}', '', 'nope'].join('\n');

    const { status, body } = await post(form(['file', jsonlFile(bad)], ['purpose', 'fine-tune']));

    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      message: 'Invalid fine-tune dataset: line 2: message 1 has invalid role "bot"; line 4: invalid JSON',
      param: 'file',
      code: 'invalid_dataset',
    });
    expect(await storedNames()).toEqual([]);
  });

  it('refuses a file over maxFileBytes with 413 and leaves no file behind', async () => {
    // Far more than socket buffers hold: the 413 reaches the client only because the rest is drained.
    const big = Buffer.alloc(MAX_FILE_BYTES * 16, 'x');

    const { status, body } = await post(form(['file', jsonlFile(big)], ['purpose', 'batch']));

    expect(status).toBe(413);
    expect(body.error).toMatchObject({ param: 'file', message: 'File exceeds the maximum size of 65536 bytes' });
    expect(await storedNames()).toEqual([]);
  });

  it('refuses a non-multipart body with 415', async () => {
    const { status, body } = await post(JSON.stringify({ purpose: 'batch' }), { 'content-type': 'application/json' });

    expect(status).toBe(415);
    expect(body.error.type).toBe('invalid_request_error');
  });

  it('refuses a multipart content type without a boundary', async () => {
    const { status } = await post('whatever', { 'content-type': 'multipart/form-data' });

    expect(status).toBe(400);
  });

  it('requires a file part', async () => {
    const { status, body } = await post(form(['purpose', 'batch']));

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ param: 'file' });
    expect(body.error.message).toContain('file');
  });

  it('refuses a text field in place of the file', async () => {
    const { status, body } = await post(form(['file', 'just text'], ['purpose', 'batch']));

    expect(status).toBe(400);
    expect(body.error.param).toBe('file');
  });

  it('refuses a second file and discards the first', async () => {
    const { status, body } = await post(
      form(['file', jsonlFile(DATASET)], ['file', jsonlFile(DATASET, 'again.jsonl')], ['purpose', 'batch']),
    );

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ param: 'file', message: 'Only one file may be uploaded per request' });
    expect(await storedNames()).toEqual([]);
  });

  it('refuses an unknown field, naming it, and discards a file already stored', async () => {
    const { status, body } = await post(form(['file', jsonlFile(DATASET)], ['purpose', 'batch'], ['colour', 'blue']));

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ param: 'colour', message: "Unknown field 'colour'" });
    expect(await storedNames()).toEqual([]);
  });

  it('refuses a repeated field', async () => {
    const { status, body } = await post(
      form(['purpose', 'batch'], ['purpose', 'fine-tune'], ['file', jsonlFile(DATASET)]),
    );

    expect(status).toBe(400);
    expect(body.error.param).toBe('purpose');
  });

  describe('when the client hangs up mid-upload', () => {
    const boundary = 'test-boundary-7MA4YWxkTrZu0gW';
    const part = (headers: string) => Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`);

    /** Sends the request head and `sent` bytes of `body`, waits for `ready`, then drops the connection. */
    async function hangUpAfter(body: Buffer, sent: number, ready: () => Promise<boolean>): Promise<Outcome> {
      const settled = once(server.outcomes, 'settled') as Promise<[Outcome]>;
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      socket.write(
        `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.subarray(0, sent));
      await waitFor(ready, 'the upload to reach the store');
      socket.destroy();
      const [outcome] = await settled;
      return outcome;
    }

    it('removes the partial temporary file', async () => {
      const data = Buffer.alloc(40_000, 'd');
      const body = Buffer.concat([
        part('Content-Disposition: form-data; name="purpose"'),
        Buffer.from('batch\r\n'),
        part('Content-Disposition: form-data; name="file"; filename="big.jsonl"\r\nContent-Type: application/jsonl'),
        data,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);

      // Half the body: the file is mid-way, streaming into a temporary file.
      const outcome = await hangUpAfter(body, body.length / 2, async () =>
        (await storedNames()).some((name) => name.endsWith('.tmp')),
      );

      expect(outcome).toMatchObject({ ok: false, error: { code: 'upload_aborted' } });
      expect(await storedNames()).toEqual([]);
    });

    it('discards a file already stored when the fields never finish arriving', async () => {
      const head = Buffer.concat([
        part('Content-Disposition: form-data; name="file"; filename="a.jsonl"\r\nContent-Type: application/jsonl'),
        Buffer.from(DATASET),
        Buffer.from('\r\n'),
        part('Content-Disposition: form-data; name="purpose"'),
        Buffer.from('fine'),
      ]);
      const body = Buffer.concat([head, Buffer.from(`-tune\r\n--${boundary}--\r\n`)]);

      // The file part is complete (the store has renamed it into place); purpose is cut off.
      const outcome = await hangUpAfter(body, head.length, async () =>
        (await storedNames()).some((name) => name.startsWith('file-')),
      );

      expect(outcome).toMatchObject({ ok: false, error: { code: 'upload_aborted' } });
      expect(await storedNames()).toEqual([]);
    });
  });
});
