import type { Config } from '../config';
import type { FileStore } from './file-store';
import { LocalFileStore } from './local-file-store';
import { createS3Client, parseS3Location, S3FileStore } from './s3-file-store';

/** The store GATEWAY_FILE_STORE names: the local disk under DATA_DIR, or an S3-compatible bucket. */
export function createFileStore(config: Pick<Config, 'filesDir' | 's3FileStore'>): FileStore {
  const s3 = config.s3FileStore;
  if (!s3) return new LocalFileStore(config.filesDir);
  return new S3FileStore(createS3Client(s3), parseS3Location(s3.location));
}
