import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
// s3rver ships no types: the little used here is typed by hand.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };
import { createS3Client, type S3ClientSettings } from '../../src/storage/s3-file-store';

/** A real S3-compatible server (s3rver) on 127.0.0.1, a random port and a temporary directory. */
export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The settings a gateway (or a store under test) uses to reach it. */
  settings: S3ClientSettings;
  /** The environment that points a gateway's file store at `s3://bucket/prefix`. */
  env(prefix: string): Record<string, string>;
  /** Keys of the objects under `prefix` (complete objects only: parts of an unfinished upload are not objects). */
  keys(prefix?: string): Promise<string[]>;
  stop(): Promise<void>;
}

// s3rver accepts these (and only these) credentials by default.
const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER';

export async function startLocalS3(bucket = 'gw-files'): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), 'gw-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const settings: S3ClientSettings = { endpoint, region: 'us-east-1', accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, sessionToken: undefined };
  const client = createS3Client(settings);
  return {
    endpoint,
    bucket,
    settings,
    env: (prefix) => ({
      GATEWAY_FILE_STORE: `s3://${bucket}/${prefix}`,
      GATEWAY_FILE_STORE_ENDPOINT: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    }),
    async keys(prefix = '') {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
    },
    async stop() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
