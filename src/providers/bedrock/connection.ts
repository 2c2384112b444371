/**
 * A Bedrock connection: the three AWS SDK v3 clients an operation may need (the Bedrock control
 * plane, its runtime, S3), pointed at the endpoints of server configuration, signing with the
 * caller's credentials, timing out and retrying as the gateway's HTTP policy says. Clients are made
 * on first use (most operations need one), over keep-alive agents shared by every connection.
 */
import http from 'node:http';
import https from 'node:https';
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { BuildHandler, MiddlewareStack } from '@smithy/types';
import { lazy } from '../../lazy';
import { DEFAULT_HTTP_POLICY } from '../http';
import type { SettingValues } from '../settings';
import type { ProviderEnvironment } from '../module';
import { changedPath, hasDotSegment } from '../url';
import type { GatewayError } from '../../errors';
import { aws, awsFailure, type AwsService } from './errors';
import { maxAttempts, retryStrategy } from './retry';
import type { BedrockSettings } from './settings';

export interface BedrockConnection {
  region: string;
  /** The bucket file operations work on (`x-gateway-aws-s3-bucket`). */
  bucket: string | undefined;
  /** Where an upload goes, when the caller chose (`x-gateway-aws-s3-object-key`). */
  objectKey: string | undefined;
  roleArn: string | undefined;
  /** The deployment or provisioned throughput chat calls (`x-gateway-aws-bedrock-model`). */
  servingModel: string | undefined;
  control(): BedrockClient;
  runtime(): BedrockRuntimeClient;
  s3(): S3Client;
  /** Runs an SDK call, its failure mapped to a provider error with the credentials scrubbed. */
  call<T>(service: AwsService, send: () => Promise<T>): Promise<T>;
  /** The provider error for what an SDK call (or a stream it returned) threw. */
  failure(service: AwsService, err: unknown): GatewayError;
}

// One pool of sockets for every connection: a connection lives for one operation, its sockets longer.
const agents = {
  httpAgent: new http.Agent({ keepAlive: true, maxSockets: 50 }),
  httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 50 }),
};

/**
 * The SDKs build Bedrock's and S3's paths themselves: the guard of url.ts on the request they are
 * about to sign and send. A path with a `.` or `..` segment (which a server may fold into another
 * route) is refused before any connection.
 */
function pathGuard<I extends object, O extends object>(next: BuildHandler<I, O>): BuildHandler<I, O> {
  return (args) => {
    const { path } = args.request as { path?: unknown };
    if (typeof path === 'string' && hasDotSegment(path)) throw changedPath();
    return next(args);
  };
}

function guarded<I extends object, O extends object, C extends { middlewareStack: MiddlewareStack<I, O> }>(
  client: C & { middlewareStack: MiddlewareStack<I, O> },
): C {
  client.middlewareStack.add(pathGuard<I, O>, { step: 'build', name: 'gatewayPathGuard' });
  return client;
}

export function connectBedrock(s: SettingValues<BedrockSettings>, env: ProviderEnvironment): BedrockConnection {
  const timeoutMs = env.http.timeoutMs ?? DEFAULT_HTTP_POLICY.timeoutMs;
  // The region matched a strict pattern: it fills a host name's label and nothing else.
  const endpoint = (name: string) => env.baseUrls[name].replaceAll('{region}', s.region);
  const common = () => ({
    region: s.region,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey, ...(s.sessionToken ? { sessionToken: s.sessionToken } : {}) },
    // requestTimeout bounds the wait for the answer's head; socketTimeout a stall while a body streams.
    requestHandler: new NodeHttpHandler({ ...agents, requestTimeout: timeoutMs, throwOnRequestTimeout: true, socketTimeout: timeoutMs }),
    retryStrategy: retryStrategy(env.http),
    maxAttempts: maxAttempts(env.http),
  });
  const secrets = [s.accessKeyId, s.secretAccessKey, s.sessionToken].filter((v): v is string => v !== undefined);
  return {
    region: s.region,
    bucket: s.bucket,
    objectKey: s.objectKey,
    roleArn: s.roleArn,
    servingModel: s.servingModel,
    control: lazy(() => guarded(new BedrockClient({ ...common(), endpoint: endpoint('control') }))),
    runtime: lazy(() => guarded(new BedrockRuntimeClient({ ...common(), endpoint: endpoint('runtime') }))),
    // A configured S3 endpoint (a private or test S3) is addressed path-style; AWS's own virtual-hosted.
    s3: lazy(() => guarded(new S3Client({ ...common(), endpoint: endpoint('s3'), forcePathStyle: env.configured.has('s3') }))),
    call: (service, send) => aws(service, secrets, send),
    failure: (service, err) => awsFailure(err, service, secrets),
  };
}
