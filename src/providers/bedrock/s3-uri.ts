/**
 * `s3://bucket/key` references: client mode's file ids, and what jobs read and write. What goes to
 * Bedrock must match its S3Uri pattern; what the gateway reads or writes itself must name a bucket
 * and key that pass the setting patterns (no "." or ".." path parts, nothing that leaves the host).
 */
import { GatewayError, type FieldPath } from '../../errors';
import { BUCKET_PATTERN, OBJECT_KEY_PATTERN } from './settings';

export interface S3Location {
  bucket: string;
  key: string;
}

/** Bedrock's S3Uri (bedrock-2023-04-20 model): a bucket, then `[-!_*'().a-zA-Z0-9]` parts, at most 1024 characters. */
const BEDROCK_S3_URI = /^s3:\/\/[a-z0-9][-.a-z0-9]{1,61}[a-z0-9](?:\/[-!_*'().a-z0-9A-Z]+(?:\/[-!_*'().a-z0-9A-Z]+)*)?\/?$/;
const MAX_URI_LENGTH = 1024;

export const s3Uri = ({ bucket, key }: S3Location) => `s3://${bucket}/${key}`;

/** The location of an `s3://` URI whose bucket and key the gateway may address, or undefined. */
export function parseS3Uri(uri: string): S3Location | undefined {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match || !BUCKET_PATTERN.test(match[1]) || !OBJECT_KEY_PATTERN.test(match[2])) return undefined;
  return { bucket: match[1], key: match[2] };
}

/** A URI Bedrock will take for its data (training, validation, output), or 400 naming the field. */
export function bedrockS3Uri(uri: string, path: FieldPath | string): string {
  if (uri.length <= MAX_URI_LENGTH && BEDROCK_S3_URI.test(uri)) return uri;
  throw new GatewayError('invalid_request', "must be an S3 URI Amazon Bedrock accepts (s3://<bucket>/<key>, the key of letters, digits and -!_*'().)", {
    path,
    aboutField: true,
    code: 'invalid_s3_uri',
  });
}

/** The last part of a key: what a file is called. */
export const baseName = (key: string) => key.slice(key.lastIndexOf('/') + 1);

/** The key's folder, with its trailing "/" ('' at the bucket's root). */
export const folderOf = (key: string) => key.slice(0, key.lastIndexOf('/') + 1);
