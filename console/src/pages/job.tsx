import { useMemo, useState } from 'preact/hooks';
import { graphql, rest } from '../api';
import { lossPoints } from '../loss';
import { href } from '../router';
import { ErrorNote, Page, Retrying, Status, formatTime, useAction, useLoad, type GatewayStatus } from '../ui';
import { isRunning } from './jobs';
import { LossChart } from './loss-chart';

interface JobDetail {
  id: string;
  status: string;
  provider: string;
  integration: string;
  model: string;
  fineTunedModel: string | null;
  createdAt: string;
  finishedAt: string | null;
  trainedTokens: number | null;
  trainingFileId: string;
  error: { code: string; message: string } | null;
  gatewayStatus: (GatewayStatus & { attempts: number; nextAttemptAt: string; failsAt: string | null }) | null;
  events: { id: string; createdAt: string; level: string; message: string; type: string | null; data: unknown }[];
  checkpoints: { id: string; stepNumber: number; metrics: Record<string, unknown>; fineTunedModelCheckpoint: string }[];
}

const JOB = `query ConsoleJob($id: ID!, $workspaceId: String) {
  fineTuningJob(id: $id, workspaceId: $workspaceId) {
    id status provider integration model fineTunedModel createdAt finishedAt trainedTokens trainingFileId
    error { code message }
    gatewayStatus { reason attempts nextAttemptAt failsAt lastError { message } }
    events(limit: 100) { id createdAt level message type data }
    checkpoints(limit: 100) { id stepNumber metrics fineTunedModelCheckpoint }
  }
}`;

/** While the job runs the page polls it; the chart and the timeline grow as the provider reports. */
export function JobPage({ id }: { id: string }) {
  const job = useLoad(async () => (await graphql<{ fineTuningJob: JobDetail }>(JOB, { id })).fineTuningJob, [id], {
    ms: 1500,
    while: (j) => isRunning(j.status),
  });
  const cancellation = useAction();
  const [cancelling, setCancelling] = useState(false);
  const data = job.data;
  const points = useMemo(() => (data ? lossPoints(data.checkpoints, data.events) : []), [data]);
  const timeline = useMemo(() => (data ? [...data.events].reverse() : []), [data]);
  const cancel = () =>
    cancellation.run(async () => {
      setCancelling(true);
      try {
        await rest('POST', `/fine_tuning/jobs/${encodeURIComponent(id)}/cancel`);
        await job.reload();
      } finally {
        setCancelling(false);
      }
    }, 'Cancel this fine-tuning job? The provider stops training it; this cannot be undone.');
  return (
    <Page title="Fine-tuning job" actions={<a href={href('jobs')}>All jobs</a>}>
      <ErrorNote error={job.error} />
      {data && (
        <>
          <JobFacts job={data} />
          {data.error && (
            <p class="error" role="alert">
              {data.error.code}: {data.error.message}
            </p>
          )}
          {data.gatewayStatus && <RetryNote status={data.gatewayStatus} />}
          {isRunning(data.status) && (
            <p>
              <button type="button" class="danger" onClick={() => void cancel()} disabled={cancelling}>
                Cancel job
              </button>
            </p>
          )}
          <ErrorNote error={cancellation.error} />
          <h2>Training loss</h2>
          <LossChart points={points} />
          <h2>Timeline</h2>
          <ol class="timeline">
            {timeline.map((event) => (
              <li key={event.id} class={`level-${event.level}`}>
                <time>{formatTime(event.createdAt)}</time> <span class="muted">{event.level}</span> {event.message}
              </li>
            ))}
          </ol>
        </>
      )}
    </Page>
  );
}

function JobFacts({ job }: { job: JobDetail }) {
  return (
    <dl class="facts">
      <dt>Id</dt>
      <dd>{job.id}</dd>
      <dt>Status</dt>
      <dd aria-live="polite" data-testid="job-status">
        <Status status={job.status} /> {job.gatewayStatus && <Retrying gatewayStatus={job.gatewayStatus} />}
      </dd>
      <dt>Provider</dt>
      <dd>
        {job.provider} ({job.integration})
      </dd>
      <dt>Base model</dt>
      <dd>{job.model}</dd>
      <dt>Fine-tuned model</dt>
      <dd>{job.fineTunedModel ? <a href={href('playground', job.fineTunedModel)}>{job.fineTunedModel}</a> : '—'}</dd>
      <dt>Trained tokens</dt>
      <dd>{job.trainedTokens ?? '—'}</dd>
      <dt>Created</dt>
      <dd>{formatTime(job.createdAt)}</dd>
      <dt>Finished</dt>
      <dd>{formatTime(job.finishedAt)}</dd>
    </dl>
  );
}

/** What the job monitor is retrying, and what happens if it keeps failing. */
function RetryNote({ status }: { status: NonNullable<JobDetail['gatewayStatus']> }) {
  return (
    <p class="notice" data-testid="retry-note">
      {status.lastError.message}. Failed attempts in a row: {status.attempts}; next attempt {formatTime(status.nextAttemptAt)}.
      {status.failsAt && ` The job fails at ${formatTime(status.failsAt)} if the provider still cannot be reached.`}
    </p>
  );
}
