/**
 * The hosted job's state machine (pure functions): what a provider poll changes, and when it changes
 * nothing — the monitor backs off only then, so "no change" must really be recognised as such —
 * and how a failed step that will be retried is described.
 */
import { GatewayError, PROVIDER_UNREACHABLE, providerCode } from '../../src/errors';
import { cancelled, fromProviderJob, transition } from '../../src/modules/fine-tuning/fine-tuning.state';
import { retryError } from '../../src/modules/fine-tuning/job-errors';
import { hostedJob as job, providerJob as remote } from '../support/factories';

describe('fromProviderJob', () => {
  it('is null when the provider reports nothing new (the monitor then backs off)', () => {
    expect(fromProviderJob(job(), remote(), [], [])).toBeNull();
    expect(fromProviderJob(job({ trainedTokens: 5000, status: 'succeeded' }), remote({ trainedTokens: 5000, status: 'succeeded' }), [], [])).toBeNull();
  });

  it('maps the terminal state and records the status change as an event', () => {
    const change = fromProviderJob(
      job(),
      remote({ status: 'succeeded', fineTunedModel: 'ft:x', trainedTokens: 3_000_000_000, finishedAt: 1_700_000_100, resultFiles: ['file-r'] }),
      [{ id: 'ev-1', createdAt: 1_700_000_100, level: 'info', message: 'done', type: 'message', data: {} }],
      [],
    )!;
    expect(change.data).toMatchObject({
      status: 'succeeded',
      fineTunedModel: 'ft:x',
      trainedTokens: 3_000_000_000,
      finishedAt: new Date(1_700_000_100_000),
      resultFiles: ['file-r'],
    });
    expect(change.events!.map((e) => e.message)).toEqual(['done', 'Job status changed from running to succeeded']);
    expect(change.events![0].providerEventId).toBe('ev-1');
  });

  it('takes the hyperparameters the provider settled on from its method', () => {
    const change = fromProviderJob(
      job(),
      remote({ method: { type: 'supervised', hyperparameters: { nEpochs: 4, batchSize: 8, learningRateMultiplier: 1.8 } } }),
      [],
      [],
    )!;
    expect(change.data.hyperparameters).toEqual({ nEpochs: 4, batchSize: 8, learningRateMultiplier: 1.8 });
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

describe('retryError', () => {
  it("tells the job's gateway_status why a step is retried: no answer, the provider's 5xx or 429, or the gateway itself", () => {
    const provider = (status: number, code: string | null = null) =>
      new GatewayError('provider', 'OpenAI: failed', { status, code: code === null ? null : providerCode(code) });
    expect(retryError(provider(502, PROVIDER_UNREACHABLE))).toEqual({
      reason: 'provider_unreachable',
      code: 'provider_unreachable',
      message: 'OpenAI: failed',
      status: 502,
    });
    expect(retryError(provider(504)).reason).toBe('provider_unreachable');
    expect(retryError(provider(502)).reason).toBe('provider_unavailable');
    expect(retryError(provider(429, 'rate_limit_exceeded'))).toMatchObject({ reason: 'provider_rate_limited', code: 'rate_limit_exceeded', status: 429 });
    // The gateway's own failure: no detail of it (it may hold anything) reaches the answer.
    expect(retryError(new Error('ENOSPC /var/data/files/abc'))).toEqual({
      reason: 'gateway_error',
      code: 'internal_error',
      message: 'The gateway could not run this job step',
      status: null,
    });
  });
});
