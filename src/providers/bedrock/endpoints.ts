/**
 * Where Bedrock calls go: the control plane, the runtime and S3, each overridable by server
 * configuration (never by a request). `{region}` is filled from the validated region setting.
 */
export const BEDROCK_ENDPOINTS = {
  control: { env: 'GATEWAY_BEDROCK_BASE_URL', default: 'https://bedrock.{region}.amazonaws.com' },
  runtime: { env: 'GATEWAY_BEDROCK_RUNTIME_BASE_URL', default: 'https://bedrock-runtime.{region}.amazonaws.com' },
  s3: { env: 'GATEWAY_S3_BASE_URL', default: 'https://s3.{region}.amazonaws.com' },
} as const;
