/**
 * Amazon Bedrock model customization: datasets go to the caller's S3 bucket (converted on the way to
 * the record format of the base model), jobs are CreateModelCustomizationJob & co., events and
 * checkpoints are made from the job and its metrics files, and a tuned model answers chat through
 * the runtime's Converse once it is deployed. Every call goes through the official AWS SDK v3 clients
 * (SigV4, retries, time-outs), pointed at the endpoints of server configuration; they load with the
 * operations (./implementation.ts) on the first Bedrock call.
 */
import { lazyRequire } from '../../lazy';
import { deferredProvider } from '../deferred';
import { OPERATIONS } from '../types';
import type * as Implementation from './implementation';
import { MIN_RECORDS } from './batch-limits';
import { BEDROCK_CHAT_SUPPORT } from './chat-support';
import { bedrockDataset } from './dataset';
import { BEDROCK_ENDPOINTS } from './endpoints';
import { bedrockJobOptions } from './job-options';
import { bedrockSettings } from './settings';

export const bedrockProvider = deferredProvider(
  {
    name: 'bedrock',
    title: 'Amazon Bedrock',
    settings: bedrockSettings,
    jobOptions: bedrockJobOptions,
    endpoints: BEDROCK_ENDPOINTS,
    // Every operation of the contract, and provider mode's recovery of an interrupted submission.
    operations: [...OPERATIONS, 'findJob'],
    dataset: bedrockDataset,
    chatSupport: BEDROCK_CHAT_SUPPORT,
    // Batch inference (model invocation jobs, ./batch.ts), in client mode too (./client-batch.ts).
    batch: { client: { limits: { minRequests: MIN_RECORDS }, opaqueInputIds: true } },
  },
  // Loaded on the first Bedrock call (../deferred.ts).
  lazyRequire<typeof Implementation>(require, './implementation'),
);
