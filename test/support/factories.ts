/**
 * Fixture factories: a complete, valid object of each internal model with sensible defaults, so a
 * test names only the fields it is about (`hostedJob({ status: 'queued' })`).
 */
import { randomUUID } from 'node:crypto';
import type { HostedJob } from '../../src/modules/fine-tuning/fine-tuning.model';
import type { ProviderJob } from '../../src/providers/types';

const AUTO = { nEpochs: 'auto', batchSize: 'auto', learningRateMultiplier: 'auto' } as const;

export function hostedJob(over: Partial<HostedJob> = {}): HostedJob {
  return {
    id: randomUUID(),
    organisationId: randomUUID(),
    workspaceId: randomUUID(),
    status: 'running',
    model: 'gpt-4o-mini',
    providerModel: null,
    provider: 'openai',
    integrationSlug: 'my-openai',
    trainingFileId: randomUUID(),
    validationFileId: null,
    suffix: null,
    seed: 42,
    method: { type: 'supervised', hyperparameters: { ...AUTO } },
    legacyHyperparameters: false,
    metadata: null,
    gatewayOptions: {},
    providerOptions: {},
    providerTrainingFileId: 'file-1',
    providerValidationFileId: null,
    providerJobId: 'ftjob-1',
    submitAttempts: 1,
    fineTunedModel: null,
    servingModel: null,
    trainedTokens: null,
    error: null,
    resultFiles: [],
    estimatedFinish: null,
    finishedAt: null,
    providerCancelPending: false,
    idlePolls: 0,
    failedAttempts: 0,
    retry: null,
    createdAt: new Date(),
    ...over,
  };
}

export function providerJob(over: Partial<ProviderJob> = {}): ProviderJob {
  return {
    id: 'ftjob-1',
    status: 'running',
    model: 'gpt-4o-mini',
    fineTunedModel: null,
    servingModel: null,
    trainedTokens: null,
    error: null,
    createdAt: 1_700_000_000,
    finishedAt: null,
    estimatedFinish: null,
    hyperparameters: { ...AUTO },
    method: null,
    resultFiles: [],
    trainingFile: 'file-1',
    validationFile: null,
    seed: 42,
    suffix: null,
    metadata: null,
    organizationId: 'org-fake',
    ...over,
  };
}

/** Line `n` of a chat fine-tuning dataset: system, user (with non-ASCII text) and assistant messages. */
export const chatExample = (n: number) =>
  JSON.stringify({
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: `Question ${n} — ünïcödé` },
      { role: 'assistant', content: `Answer ${n}` },
    ],
  });

/** A chat fine-tuning dataset of `count` lines (chatExample 0 to count - 1), newline-terminated. */
export const chatJsonl = (count: number) => Array.from({ length: count }, (_, i) => chatExample(i)).join('\n') + '\n';
