import type { Config } from '../config';
import { lazy, lazyRequire } from '../lazy';
import type { FileStore } from './file-store';
import { LocalFileStore } from './local-file-store';
import type * as S3 from './s3-file-store';

const s3Module = lazyRequire<typeof S3>(require, './s3-file-store');

/** The store GATEWAY_FILE_STORE names: the local disk under DATA_DIR, or an S3-compatible bucket. */
export function createFileStore(config: Pick<Config, 'filesDir' | 's3FileStore'>): FileStore {
  const s3 = config.s3FileStore;
  if (!s3) return new LocalFileStore(config.filesDir);
  // The AWS SDK loads with the first file operation: a gateway storing files locally never loads it.
  return deferredFileStore(() => {
    const { createS3Client, parseS3Location, S3FileStore } = s3Module();
    return new S3FileStore(createS3Client(s3), parseS3Location(s3.location));
  });
}

/** A store made on first use. */
function deferredFileStore(make: () => FileStore): FileStore {
  const store = lazy(make);
  return {
    put: async (key, source, opts) => store().put(key, source, opts),
    open: async (key) => store().open(key),
    delete: async (key) => store().delete(key),
  };
}
