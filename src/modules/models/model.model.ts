/**
 * A fine-tuned model the gateway serves: the result of a succeeded hosted job of the workspace.
 * Its id is the job's `fine_tuned_model`; chat completions route it to the job's provider with the
 * job's integration.
 */
import type { HostedJob } from '../fine-tuning/fine-tuning.model';

export interface ServedModel {
  /** The job's `fine_tuned_model`. */
  id: string;
  /** When the job finished (its creation time when the provider gave no end time). */
  created: Date;
  organisationId: string;
  /** The provider that trained it and serves it. */
  provider: string;
  fineTuningJobId: string;
}

type JobFields = Pick<HostedJob, 'id' | 'status' | 'fineTunedModel' | 'finishedAt' | 'createdAt' | 'organisationId'> & { provider: string };

/** The model a job produced, or null while it has none to serve (not succeeded, or no result name). */
export function servedModelOf(job: JobFields): ServedModel | null {
  if (job.status !== 'succeeded' || !job.fineTunedModel) return null;
  return {
    id: job.fineTunedModel,
    created: job.finishedAt ?? job.createdAt,
    organisationId: job.organisationId,
    provider: job.provider,
    fineTuningJobId: job.id,
  };
}
