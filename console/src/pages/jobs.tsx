import { useState } from 'preact/hooks';
import { graphql, rest } from '../api';
import { href, navigate } from '../router';
import { type Column, DataTable, ErrorNote, Page, Retrying, Status, formatTime, useLoad, type GatewayStatus } from '../ui';

interface JobRow {
  id: string;
  status: string;
  provider: string;
  model: string;
  integration: string;
  fineTunedModel: string | null;
  createdAt: string;
  gatewayStatus: GatewayStatus | null;
}

const JOBS = `query ConsoleJobs($workspaceId: String) {
  fineTuningJobs(limit: 100, workspaceId: $workspaceId) {
    items { id status provider model integration fineTunedModel createdAt gatewayStatus { reason lastError { message } } }
  }
}`;

const COLUMNS: Column[] = [{ label: 'Job' }, { label: 'Status' }, { label: 'Provider', wide: true }, { label: 'Model' }, { label: 'Created' }];

export const isRunning = (status: string) => ['VALIDATING_FILES', 'QUEUED', 'RUNNING'].includes(status.toUpperCase());

export function JobsPage() {
  const jobs = useLoad(async () => (await graphql<{ fineTuningJobs: { items: JobRow[] } }>(JOBS)).fineTuningJobs.items, [], {
    ms: 3000,
    while: (items) => items.some((job) => isRunning(job.status)),
  });
  return (
    <Page title="Fine-tuning jobs">
      <NewJobForm />
      <h2>Jobs</h2>
      <ErrorNote error={jobs.error} />
      <DataTable
        caption="Fine-tuning jobs, newest first"
        columns={COLUMNS}
        rows={jobs.data}
        empty="No fine-tuning job yet."
        row={(job) => (
          <tr key={job.id}>
            <td>
              <a href={href('jobs', job.id)} class="job-id">
                {job.id}
              </a>
            </td>
            <td>
              <span class="badges">
                <Status status={job.status} />
                {job.gatewayStatus && <Retrying gatewayStatus={job.gatewayStatus} />}
              </span>
            </td>
            <td class="wide-only">
              {job.provider} <span class="muted">{job.integration}</span>
            </td>
            <td class="model">{job.fineTunedModel ?? job.model}</td>
            <td>{formatTime(job.createdAt)}</td>
          </tr>
        )}
      />
    </Page>
  );
}

interface Choices {
  files: { id: string; filename: string }[];
  integrations: { slug: string; provider: string; name: string }[];
}

async function loadChoices(): Promise<Choices> {
  const [files, integrations] = await Promise.all([
    rest<{ data: Choices['files'] }>('GET', '/files?purpose=fine-tune&limit=100'),
    rest<{ data: Choices['integrations'] }>('GET', '/integrations'),
  ]);
  return { files: files.data, integrations: integrations.data };
}

/** The gateway's extension of OpenAI's create body: `gateway_options` names the integration running the job. */
const createHostedJob = (model: string, trainingFile: string | undefined, integration: string | undefined, suffix: string) =>
  rest<{ id: string }>('POST', '/fine_tuning/jobs', {
    model,
    training_file: trainingFile,
    ...(suffix ? { suffix } : {}),
    gateway_options: { 'x-gateway-provider': `@${integration}` },
  });

/** A hosted job: the gateway uploads the dataset to the integration's provider and follows the job. */
function NewJobForm() {
  const choices = useLoad(loadChoices, []);
  const [model, setModel] = useState('gpt-4o-mini-2024-07-18');
  const [file, setFile] = useState('');
  const [integration, setIntegration] = useState('');
  const [suffix, setSuffix] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const files = choices.data?.files ?? [];
  const integrations = choices.data?.integrations ?? [];
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const job = await createHostedJob(model, file || files[0]?.id, integration || integrations[0]?.slug, suffix);
      navigate('jobs', job.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="panel" open={files.length > 0 && integrations.length > 0}>
      <summary>Start a hosted job</summary>
      <ErrorNote error={choices.error} />
      {choices.data && (files.length === 0 || integrations.length === 0) && <Prerequisites />}
      <form class="grid-form" onSubmit={submit}>
        <label for="job-model">Base model</label>
        <input id="job-model" required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
        <label for="job-file">Training file</label>
        <select id="job-file" required value={file || files[0]?.id} onChange={(e) => setFile(e.currentTarget.value)}>
          {files.map((f) => (
            <option key={f.id} value={f.id}>
              {f.filename} ({f.id.slice(0, 8)})
            </option>
          ))}
        </select>
        <label for="job-integration">Integration</label>
        <select id="job-integration" required value={integration || integrations[0]?.slug} onChange={(e) => setIntegration(e.currentTarget.value)}>
          {integrations.map((i) => (
            <option key={i.slug} value={i.slug}>
              @{i.slug} ({i.provider})
            </option>
          ))}
        </select>
        <label for="job-suffix">Suffix (optional)</label>
        <input id="job-suffix" maxLength={64} value={suffix} onInput={(e) => setSuffix(e.currentTarget.value)} />
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || files.length === 0 || integrations.length === 0}>
          Start job
        </button>
      </form>
    </details>
  );
}

const Prerequisites = () => (
  <p>
    A hosted job needs a <a href={href('files')}>fine-tune dataset</a> and a stored integration (<code>POST /v1/integrations</code>).
  </p>
);
