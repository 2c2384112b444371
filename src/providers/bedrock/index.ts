/**
 * Amazon Bedrock model customization: datasets go to the caller's S3 bucket (converted on the way to
 * the record format of the base model), jobs are CreateModelCustomizationJob & co., events and
 * checkpoints are made from the job and its metrics files, and a tuned model answers chat through
 * the runtime's Converse once it is deployed. Every call goes through the official AWS SDK v3 clients
 * (SigV4, retries, time-outs), pointed at the endpoints of server configuration.
 */
import type { ProviderModule } from '../types';
import { cancelJob } from './cancel-job';
import { chat } from './chat';
import { BEDROCK_ENDPOINTS, connectBedrock, type BedrockConnection } from './connection';
import { createJob } from './create-job';
import { bedrockDataset } from './dataset';
import { deleteFile, fileContent, getFile, listFiles } from './files';
import { findJob } from './find-job';
import { getJob } from './get-job';
import { listCheckpoints } from './list-checkpoints';
import { listEvents } from './list-events';
import { listJobs } from './list-jobs';
import { bedrockSettings, type BedrockSettings } from './settings';
import { uploadFile } from './upload-file';

export const bedrockProvider: ProviderModule<BedrockSettings, BedrockConnection> = {
  name: 'bedrock',
  title: 'Amazon Bedrock',
  settings: bedrockSettings,
  endpoints: BEDROCK_ENDPOINTS,
  connect: connectBedrock,
  operations: {
    uploadFile,
    listFiles,
    getFile,
    fileContent,
    deleteFile,
    createJob,
    getJob,
    listJobs,
    cancelJob,
    listEvents,
    listCheckpoints,
    findJob,
    chat,
  },
  dataset: bedrockDataset,
};
