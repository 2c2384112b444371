import { downloadFile, rest } from '../api';
import { ErrorNote, Page, Status, formatTime, useAction, useLoad } from '../ui';

/** OpenAI's batch object, as `GET /v1/batches` lists it (the fields the page shows). */
interface Batch {
  id: string;
  status: string;
  model: string;
  endpoint: string;
  input_file_id: string;
  output_file_id?: string;
  error_file_id?: string;
  created_at: number;
  request_counts: { total: number; completed: number; failed: number };
  gateway?: { runner: string; provider: string; integration: string };
}

const FINISHED = ['completed', 'failed', 'expired', 'cancelled'];
/** The statuses the gateway accepts a cancel in. */
const CANCELLABLE = ['validating', 'in_progress'];

/** Lines done (answered or failed) out of all; null while the input file is not read yet. */
function batchProgress(counts: Batch['request_counts']): { done: number; total: number; percent: number } | null {
  if (counts.total === 0) return null;
  const done = counts.completed + counts.failed;
  return { done, total: counts.total, percent: Math.round((done / counts.total) * 100) };
}

export function BatchesPage() {
  const batches = useLoad(async () => (await rest<{ data: Batch[] }>('GET', '/batches?limit=100')).data, [], {
    ms: 2000,
    while: (list) => list.some((b) => !FINISHED.includes(b.status)),
  });
  const action = useAction();
  const cancel = (batch: Batch) =>
    action.run(async () => {
      await rest('POST', `/batches/${encodeURIComponent(batch.id)}/cancel`);
      await batches.reload();
    }, `Cancel batch ${batch.id}? Lines not sent yet are not sent; those answered stay in its output file.`);
  const download = (fileId: string, filename: string) => action.run(() => downloadFile(fileId, filename));
  return (
    <Page title="Batches">
      <p class="hint">
        Batches of chat requests (OpenAI's Batch API): create one with <code>POST /v1/batches</code> from a file uploaded with purpose <code>batch</code>.
      </p>
      <ErrorNote error={batches.error} />
      <ErrorNote error={action.error} />
      {batches.data && batches.data.length === 0 && <p>No batch yet.</p>}
      {batches.data && batches.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Batches, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Batch</th>
                <th scope="col">Status</th>
                <th scope="col">Progress</th>
                <th scope="col" class="wide-only">
                  Model
                </th>
                <th scope="col" class="wide-only">
                  Created
                </th>
                <th scope="col">Files and actions</th>
              </tr>
            </thead>
            <tbody>
              {batches.data.map((b) => (
                <tr key={b.id} data-batch={b.id}>
                  <td class="model">{b.id}</td>
                  <td>
                    <Status status={b.status} />
                  </td>
                  <td>
                    <Progress batch={b} />
                  </td>
                  <td class="wide-only model">
                    {b.model} {b.gateway && <span class="muted">{b.gateway.integration}</span>}
                  </td>
                  <td class="wide-only">{formatTime(b.created_at)}</td>
                  <td>
                    <span class="badges">
                      <DownloadButton title="Output" batch={b.id} fileId={b.output_file_id} filename={`${b.id}-output.jsonl`} onDownload={download} />
                      <DownloadButton title="Errors" batch={b.id} fileId={b.error_file_id} filename={`${b.id}-errors.jsonl`} onDownload={download} />
                      {CANCELLABLE.includes(b.status) && (
                        <button type="button" class="danger" onClick={() => void cancel(b)}>
                          Cancel<span class="visually-hidden"> {b.id}</span>
                        </button>
                      )}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

interface DownloadProps {
  title: string;
  batch: string;
  /** Absent until the batch has written the file (an error file only when a request failed). */
  fileId: string | undefined;
  filename: string;
  onDownload: (fileId: string, filename: string) => Promise<void>;
}

function DownloadButton({ title, batch, fileId, filename, onDownload }: DownloadProps) {
  if (!fileId) return null;
  return (
    <button type="button" class="secondary" onClick={() => void onDownload(fileId, filename)}>
      {title}
      <span class="visually-hidden"> of {batch}</span>
    </button>
  );
}

function Progress({ batch }: { batch: Batch }) {
  const progress = batchProgress(batch.request_counts);
  if (!progress) return <span class="muted">—</span>;
  const { failed } = batch.request_counts;
  const label = `${progress.done} of ${progress.total} requests done${failed ? `, ${failed} failed` : ''}`;
  return (
    <span class="progress-cell">
      <progress max={progress.total} value={progress.done} aria-label={`Progress of ${batch.id}`} />
      <span>{label}</span>
    </span>
  );
}
