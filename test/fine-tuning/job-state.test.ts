/**
 * The hosted job's state machine (pure functions): what a provider poll changes, and when it changes
 * nothing — the monitor backs off only then, so "no change" must really be recognised as such.
 */
import type { FineTuningJob } from '../../src/generated/prisma/client';
import { cancelled, fromProviderJob, transition } from '../../src/modules/fine-tuning/fine-tuning.state';
import type { ProviderJob } from '../../src/providers/types';

const job = (over: Partial<FineTuningJob> = {}): FineTuningJob => ({
  id: '3f9a1c52-8d0e-4b7a-9c61-2a5e8f7d4b10',
  organisationId: 'o',
  workspaceId: 'w',
  status: 'running',
  model: 'gpt-4o-mini',
  providerModel: null,
  provider: 'openai',
  integrationSlug: 'my-openai',
  trainingFileId: 'f',
  validationFileId: null,
  suffix: null,
  seed: 42,
  method: null,
  hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' },
  legacyHyperparameters: false,
  metadata: null,
  gatewayOptions: {},
  providerOptions: {},
  providerTrainingFileId: 'file-1',
  providerValidationFileId: null,
  providerJobId: 'ftjob-1',
  submitAttempts: 1,
  fineTunedModel: null,
  trainedTokens: null,
  error: null,
  resultFiles: [],
  estimatedFinish: null,
  finishedAt: null,
  providerCancelPending: false,
  nextPollAt: new Date(),
  idlePolls: 0,
  failedAttempts: 0,
  leaseOwner: 'me',
  leaseExpiresAt: new Date(),
  createdAt: new Date(),
  updatedAt: new Date(),
  ...over,
});

const remote = (over: Partial<ProviderJob> = {}): ProviderJob => ({
  id: 'ftjob-1',
  status: 'running',
  model: 'gpt-4o-mini',
  fineTunedModel: null,
  trainedTokens: null,
  error: null,
  createdAt: 1_700_000_000,
  finishedAt: null,
  estimatedFinish: null,
  hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' },
  resultFiles: [],
  trainingFile: 'file-1',
  validationFile: null,
  seed: 42,
  method: null,
  suffix: null,
  metadata: null,
  ...over,
});

describe('fromProviderJob', () => {
  it('is null when the provider reports nothing new (the monitor then backs off)', () => {
    expect(fromProviderJob(job(), remote(), [], [])).toBeNull();
    // Stored BIGINT tokens compare by value with the provider's number.
    expect(fromProviderJob(job({ trainedTokens: 5000n, status: 'succeeded' as const }), remote({ trainedTokens: 5000, status: 'succeeded' }), [], [])).toBeNull();
  });

  it('maps the terminal state and records the status change as an event', () => {
    const change = fromProviderJob(
      job(),
      remote({ status: 'succeeded', fineTunedModel: 'ft:x', trainedTokens: 3_000_000_000, finishedAt: 1_700_000_100, resultFiles: ['file-r'] }),
      [{ id: 'ev-1', createdAt: 1_700_000_100, level: 'info', message: 'done', type: 'message', data: {} }],
      [],
    )!;
    expect(change.data).toMatchObject({ status: 'succeeded', fineTunedModel: 'ft:x', trainedTokens: 3_000_000_000n, finishedAt: new Date(1_700_000_100_000), resultFiles: ['file-r'] });
    expect(change.events!.map((e) => e.message)).toEqual(['done', 'Job status changed from running to succeeded']);
    expect(change.events![0].providerEventId).toBe('ev-1');
  });

  it('takes the hyperparameters the provider settled on from its method', () => {
    const change = fromProviderJob(
      job(),
      remote({ method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 4, batch_size: 8, learning_rate_multiplier: 1.8 } } } }),
      [],
      [],
    )!;
    expect(change.data.hyperparameters).toEqual({ n_epochs: 4, batch_size: 8, learning_rate_multiplier: 1.8 });
  });

  it('gives a failed job an error even when the provider sends none', () => {
    const change = fromProviderJob(job(), remote({ status: 'failed' }), [], [])!;
    expect(change.data.error).toMatchObject({ code: 'provider_failed' });
    expect(change.events!.at(-1)).toMatchObject({ level: 'error', message: 'Job failed: The provider reported the job as failed' });
  });

  it('never moves a job that is finished here (e.g. cancelled meanwhile)', () => {
    expect(fromProviderJob(job({ status: 'cancelled' }), remote({ status: 'succeeded' }), [], [])).toBeNull();
    expect(transition(job({ status: 'failed' }), 'running')).toBeNull();
    expect(cancelled(job({ status: 'succeeded' }), true)).toBeNull();
  });
});
