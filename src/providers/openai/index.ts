/** The OpenAI adapter: every operation of the contract, each in its own file. */
import type { FineTuningProvider } from '../types';
import { cancelJob } from './cancel-job';
import { createJob } from './create-job';
import { getJob } from './get-job';
import { listCheckpoints } from './list-checkpoints';
import { listEvents } from './list-events';
import { listJobs } from './list-jobs';
import { uploadFile } from './upload-file';

export const openaiProvider: FineTuningProvider = {
  name: 'openai',
  uploadFile,
  createJob,
  getJob,
  listJobs,
  cancelJob,
  listEvents,
  listCheckpoints,
};
