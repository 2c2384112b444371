/**
 * Bedrock's settings (api.md §6.1): AWS credentials, the region (it becomes part of every host
 * name), the bucket datasets go to, the IAM role jobs run with, and the model that serves a tuned
 * model. Each value that reaches a host name, a path or a request is held to a strict pattern here,
 * before any connection is made.
 */
import { defineSettings } from '../settings';

/** A region is a DNS label of the endpoints' host names: `us-east-1`, `eu-central-1`, `us-gov-west-1`. */
const REGION = { pattern: /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/, format: 'an AWS region such as us-east-1', maxLength: 32 };

/**
 * S3's own bucket naming rules: lower-case letters, digits, "-" and single dots, 3 to 63 characters,
 * not shaped like an IP address. With virtual-hosted requests the bucket prefixes the S3 host name,
 * which it cannot leave: no "/", ":", "@" or "%" can get in.
 */
export const BUCKET_PATTERN = /^(?!\d{1,3}(?:\.\d{1,3}){3}$)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const BUCKET = { pattern: BUCKET_PATTERN, format: 'an S3 bucket name (lower-case letters, digits, "-" and ".")', maxLength: 63 };

/**
 * An object key as Bedrock's S3 URIs allow it (`[-!_*'().a-zA-Z0-9]` segments joined by "/"), with no
 * "." or ".." segment that a proxy could fold into another path.
 */
export const OBJECT_KEY_PATTERN = /^(?!(?:.*\/)?\.{1,2}(?:\/|$))[-!_*'().A-Za-z0-9]+(?:\/[-!_*'().A-Za-z0-9]+)*$/;
const OBJECT_KEY = { pattern: OBJECT_KEY_PATTERN, format: 'an S3 object key of letters, digits and -!_*\'(). in "/"-separated parts', maxLength: 900 };

export const ROLE_ARN_PATTERN = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const ROLE_ARN = { pattern: ROLE_ARN_PATTERN, format: 'an IAM role ARN (arn:aws:iam::<account>:role/<name>)', maxLength: 600 };

/** What Converse may be called with: a Bedrock ARN with one resource id (deployment, provisioned model, inference profile) or a model id. */
const SERVING_MODEL = {
  pattern: /^(?:arn:aws(?:-[a-z]+)*:bedrock:[a-z0-9-]{1,20}:\d{12}:[a-z-]{1,64}\/[A-Za-z0-9][A-Za-z0-9.:_-]{0,127}|[A-Za-z0-9][A-Za-z0-9.:_-]{0,127})$/,
  format: 'the ARN of a custom model deployment or provisioned throughput (or a model id)',
  maxLength: 256,
};

/** File operations name objects of this bucket; upload puts them there. */
const FILE_OPERATIONS = ['uploadFile', 'listFiles', 'getFile', 'fileContent', 'deleteFile'] as const;

export const bedrockSettings = defineSettings({
  accessKeyId: {
    header: 'x-gateway-aws-access-key-id',
    key: 'aws_access_key_id',
    secret: true,
    required: true,
    pattern: /^[A-Z0-9]{16,128}$/,
    format: 'an AWS access key id',
  },
  secretAccessKey: { header: 'x-gateway-aws-secret-access-key', key: 'aws_secret_access_key', secret: true, required: true, maxLength: 256 },
  sessionToken: { header: 'x-gateway-aws-session-token', key: 'aws_session_token', secret: true, maxLength: 8192 },
  region: { header: 'x-gateway-aws-region', key: 'x-gateway-aws-region', aliases: ['aws_region', 'region'], required: true, pinned: true, ...REGION },
  bucket: {
    header: 'x-gateway-aws-s3-bucket',
    key: 'x-gateway-aws-s3-bucket',
    aliases: ['aws_s3_bucket', 's3_bucket'],
    required: FILE_OPERATIONS,
    pinned: true,
    ...BUCKET,
  },
  objectKey: { header: 'x-gateway-aws-s3-object-key', key: 'x-gateway-aws-s3-object-key', aliases: ['aws_s3_object_key', 's3_object_key'], ...OBJECT_KEY },
  // Required for createJob, but it may come as provider_options.role_arn instead: create-job.ts checks.
  roleArn: { header: 'x-gateway-aws-role-arn', key: 'x-gateway-aws-role-arn', aliases: ['aws_role_arn', 'role_arn'], ...ROLE_ARN },
  servingModel: { header: 'x-gateway-aws-bedrock-model', key: 'x-gateway-aws-bedrock-model', aliases: ['aws_bedrock_model'], ...SERVING_MODEL },
});

export type BedrockSettings = typeof bedrockSettings;
