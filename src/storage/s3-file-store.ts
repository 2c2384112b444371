import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { badRequest, notFound } from '../errors';
import { ByteMeter, type FileStore, type PutOptions, type StoredObject } from './file-store';
import { assertSafeKey, feedWithoutOwning } from './local-file-store';

/** `s3://bucket/prefix` as configured in GATEWAY_FILE_STORE. */
export interface S3Location {
  bucket: string;
  /** Without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
}

export function parseS3Location(value: string): S3Location {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (!match) throw badRequest(`'${value}' is not an s3://bucket/prefix location`);
  return { bucket: match[1], prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

export interface S3FileStoreOptions {
  /** Bytes per multipart part (at least 5 MiB, S3's minimum); the upload holds `queueSize` parts in memory at most. */
  partSize?: number;
  queueSize?: number;
  /** Bytes per ranged GET while reading an object back. */
  rangeSize?: number;
}

const MiB = 1024 * 1024;

/**
 * A FileStore on any S3-compatible object store, so replicas without a shared disk see the same
 * files. Uploads stream through `lib-storage`'s multipart Upload (a small file becomes one PUT);
 * downloads stream range by range so no single response has to last for a whole large file.
 */
export class S3FileStore implements FileStore {
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly rangeSize: number;

  constructor(
    private readonly client: S3Client,
    private readonly location: S3Location,
    options: S3FileStoreOptions = {},
  ) {
    this.partSize = Math.max(5 * MiB, options.partSize ?? 8 * MiB);
    this.queueSize = options.queueSize ?? 2;
    this.rangeSize = options.rangeSize ?? 8 * MiB;
  }

  async put(key: string, source: NodeJS.ReadableStream, opts: PutOptions): Promise<StoredObject> {
    const objectKey = this.objectKey(key);
    const meter = new ByteMeter(opts.maxBytes);
    const detach = feedWithoutOwning(source, meter);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: objectKey, Body: meter },
      partSize: this.partSize,
      queueSize: this.queueSize,
      // On any failure the multipart upload is aborted: its parts never become an object.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
      return meter.result();
    } catch (err) {
      // The meter's own error (too large, source gone) says more than the SDK's account of it.
      throw meter.errored ?? err;
    } finally {
      meter.destroy();
      detach();
    }
  }

  async open(key: string): Promise<NodeJS.ReadableStream> {
    const objectKey = this.objectKey(key);
    // Looked up first: "absent" is a rejection here, not an error on a stream already being answered.
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: objectKey }));
    } catch (err) {
      if (isNotFound(err)) throw notFound('File content', key);
      throw err;
    }
    return Readable.from(this.ranges(objectKey, head.ContentLength ?? 0, head.ETag));
  }

  async delete(key: string): Promise<void> {
    // S3 deletes are idempotent: a missing key succeeds.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
  }

  /** The object's bytes, one ranged GET at a time; `IfMatch` keeps a replaced object from being spliced in. */
  private async *ranges(objectKey: string, size: number, etag: string | undefined): AsyncGenerator<Buffer> {
    for (let start = 0; start < size; start += this.rangeSize) {
      const end = Math.min(size, start + this.rangeSize) - 1;
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.location.bucket, Key: objectKey, Range: `bytes=${start}-${end}`, IfMatch: etag }),
      );
      if (!(answer.Body instanceof Readable)) throw new Error('The object store answered without a body');
      for await (const chunk of answer.Body) yield Buffer.from(chunk as Buffer);
    }
  }

  private objectKey(key: string): string {
    assertSafeKey(key);
    return this.location.prefix ? `${this.location.prefix}/${key}` : key;
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404);
}

export interface S3ClientSettings {
  endpoint: string | undefined;
  region: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  sessionToken: string | undefined;
}

/**
 * The client for GATEWAY_FILE_STORE: explicit region and credentials when configured, the AWS SDK's
 * default chain otherwise. A custom endpoint (MinIO, s3rver, R2…) gets path-style addressing, which
 * every S3-compatible server understands, and checksums only where S3 requires them, since many
 * of those servers do not speak the SDK's newer trailing-checksum encoding.
 */
export function createS3Client(settings: S3ClientSettings): S3Client {
  const { accessKeyId, secretAccessKey, sessionToken } = settings;
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region ?? 'us-east-1',
    forcePathStyle: settings.endpoint !== undefined,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, sessionToken } : undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
