/**
 * Getting a hosted job to its provider, one idempotent step at a time: stream each gateway file to
 * the provider and store the provider's file id at once; wait while the provider processes the
 * files (Azure); then create the provider job — after looking for one an interrupted attempt may
 * have created — and store its id at once. A process resuming a job after a crash repeats no step.
 */
import { Readable } from 'node:stream';
import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { Logger } from '../../logger';
import type { ProviderClient } from '../../providers/registry';
import type { CreateJobInput, ProviderJob } from '../../providers/types';
import { isTerminal, type HostedJob } from './fine-tuning.model';
import type { EventDraft, FineTuningRepository } from './fine-tuning.repository';
import type { TrainingFileSource } from './fine-tuning.service';
import { failed, fromProviderJob } from './fine-tuning.state';
import type { JobCancellation } from './job-cancellation';
import type { JobLeases, Release } from './job-leases';

export interface SubmissionOptions {
  owner: string;
  leaseMs: number;
  pollMs: number;
}

type FileRole = 'training' | 'validation';

export class JobSubmission {
  constructor(
    private readonly jobs: FineTuningRepository,
    private readonly leases: JobLeases,
    private readonly files: TrainingFileSource,
    private readonly cancellation: JobCancellation,
    private readonly logger: Logger,
    private readonly options: SubmissionOptions,
  ) {}

  async submit(scope: Scope, job: HostedJob, provider: ProviderClient): Promise<Release> {
    const again = { delayMs: this.options.pollMs, idlePolls: 0, failedAttempts: 0 };
    const training = job.providerTrainingFileId ?? (await this.upload(scope, job, 'training', job.trainingFileId, provider));
    const validation = job.validationFileId
      ? (job.providerValidationFileId ?? (await this.upload(scope, job, 'validation', job.validationFileId, provider)))
      : null;
    if (!(await this.filesReady(scope, job, provider, [training, validation]))) return again;

    let remote = job.submitAttempts > 0 && provider.supports('findJob') ? await provider.findJob(job.id) : undefined;
    if (remote) this.logger.info({ jobId: job.id, providerJobId: remote.id }, 'found the provider job of an interrupted submission');
    if (!remote) {
      // Counted before the call: whoever resumes this job after a crash looks for the job first.
      if (!(await this.leases.beginSubmit(scope, job.id, this.options.owner, this.options.leaseMs))) {
        // Cancelled meanwhile, or the lease was lost: the next claim sees the new state.
        return { delayMs: 0, idlePolls: 0, failedAttempts: job.failedAttempts };
      }
      remote = await provider.createJob(createInput(job, training, validation));
    }
    const saved = await this.leases.saveProviderJobId(scope, job.id, remote.id);
    if (!saved) return again;
    if (saved.providerJobId !== remote.id) {
      // Another process submitted too (its lease outlived ours): keep theirs, withdraw ours.
      this.logger.warn({ jobId: job.id, kept: saved.providerJobId, duplicate: remote.id }, 'duplicate provider job cancelled');
      await provider.cancelJob(remote.id).catch(() => undefined);
      return again;
    }
    this.logger.info({ jobId: job.id, provider: job.provider, providerJobId: remote.id }, 'fine-tuning job submitted');
    if (saved.providerCancelPending) {
      // Cancelled while the create call was in flight: cancel it at the provider straight away.
      await this.cancellation.run(scope, saved, provider, { transient: 'throw' });
      return again;
    }
    await this.recordSubmitted(scope, job, remote);
    return again;
  }

  /** Streams a gateway file to the provider and stores the provider's file reference at once. */
  private async upload(scope: Scope, job: HostedJob, role: FileRole, fileId: string, provider: ProviderClient): Promise<string> {
    const path = role === 'training' ? 'trainingFile' : 'validationFile';
    const file = await this.files.find(scope, fileId);
    if (!file) throw new GatewayError('not_found', `File '${fileId}' not found (deleted before it reached the provider)`, { path, code: 'not_found' });
    const files = this.files;
    const uploaded = await provider.uploadFile({
      filename: file.filename,
      purpose: 'fine-tune',
      bytes: file.bytes,
      model: job.providerModel ?? job.model,
      open: () =>
        Readable.from(
          (async function* () {
            for await (const chunk of await files.openContent(scope, fileId)) yield chunk;
          })(),
        ),
    });
    await this.leases.saveProviderFile(scope, job.id, role, uploaded.id);
    const note: EventDraft = {
      level: 'info',
      message: `Uploaded ${role} file to ${job.provider} as ${uploaded.id}`,
      type: 'message',
      data: { file_id: fileId, provider_file_id: uploaded.id },
    };
    await this.jobs.mutate(scope, job.id, (current) => (isTerminal(current.status) ? null : { data: {}, events: [note] }));
    return uploaded.id;
  }

  /** Whether the provider has processed the uploaded files (Azure); a file it rejected fails the job. */
  private async filesReady(scope: Scope, job: HostedJob, provider: ProviderClient, ids: (string | null)[]): Promise<boolean> {
    const { hosting } = provider;
    if (!hosting.fileState) return true;
    for (const id of ids) {
      if (id === null) continue;
      const file = await provider.getFile(id);
      const state = hosting.fileState(file);
      if (state === 'pending') return false;
      if (state === 'failed') {
        const error = {
          code: 'invalid_training_file',
          message: `${provider.title} could not process file ${id}: ${file.statusDetails ?? file.providerStatus ?? file.status}`,
          param: null,
        };
        await this.jobs.mutate(scope, job.id, (current) => failed(current, error));
        return false;
      }
    }
    return true;
  }

  private async recordSubmitted(scope: Scope, job: HostedJob, remote: ProviderJob): Promise<void> {
    const submitted: EventDraft = {
      level: 'info',
      message: `Submitted to ${job.provider} as ${remote.id}`,
      type: 'message',
      data: { provider_job_id: remote.id },
    };
    await this.jobs.mutate(scope, job.id, (current) => {
      if (isTerminal(current.status)) return null;
      const change = fromProviderJob(current, remote, [], []) ?? { data: {} };
      return { ...change, events: [submitted, ...(change.events ?? [])] };
    });
  }
}

function createInput(job: HostedJob, trainingFile: string, validationFile: string | null): CreateJobInput {
  return {
    model: job.providerModel ?? job.model,
    trainingFile,
    ...(validationFile ? { validationFile } : {}),
    ...(job.suffix !== null ? { suffix: job.suffix } : {}),
    seed: job.seed,
    method: job.method,
    legacyHyperparameters: job.legacyHyperparameters,
    ...(job.metadata ? { metadata: job.metadata } : {}),
    options: job.providerOptions,
    gatewayJobId: job.id,
  };
}
