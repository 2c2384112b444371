import { useState } from 'preact/hooks';
import { ApiError, rest, uploadFile } from '../api';
import { lineErrors } from '../dataset-errors';
import { type Column, DataTable, ErrorNote, Page, formatTime, messageOf, useAction, useLoad } from '../ui';

interface FileRow {
  id: string;
  filename: string;
  purpose: string;
  bytes: number;
  created_at: number;
}

const COLUMNS: Column[] = [
  { label: 'Name' },
  { label: 'Purpose' },
  { label: 'Size' },
  { label: 'Uploaded' },
  { label: 'Id' },
  { label: 'Actions', hidden: true },
];

const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`);

export function FilesPage() {
  const files = useLoad(async () => (await rest<{ data: FileRow[] }>('GET', '/files?limit=100')).data, []);
  const deletion = useAction();
  // A file a hosted job has not uploaded to its provider yet is refused (409 file_in_use, naming the job).
  const remove = (file: FileRow) =>
    deletion.run(async () => {
      await rest('DELETE', `/files/${encodeURIComponent(file.id)}`);
      await files.reload();
    }, `Delete ${file.filename} (${file.id})? This cannot be undone.`);
  return (
    <Page title="Files">
      <UploadForm onUploaded={files.reload} />
      <h2>Stored files</h2>
      <ErrorNote error={files.error} />
      <ErrorNote error={deletion.error} />
      <DataTable
        caption="Files, newest first"
        columns={COLUMNS}
        rows={files.data}
        empty="No file yet."
        row={(f) => (
          <tr key={f.id}>
            <td>{f.filename}</td>
            <td>{f.purpose}</td>
            <td>{formatBytes(f.bytes)}</td>
            <td>{formatTime(f.created_at)}</td>
            <td>
              <code>{f.id}</code>
            </td>
            <td>
              <button type="button" class="danger" aria-label={`Delete ${f.filename} (${f.id})`} onClick={() => void remove(f)}>
                Delete
              </button>
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

function UploadForm({ onUploaded }: { onUploaded: () => Promise<void> }) {
  const [file, setFile] = useState<File | null>(null);
  const [purpose, setPurpose] = useState('fine-tune');
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    setError(null);
    setDone(null);
    setProgress(0);
    try {
      const stored = await uploadFile<FileRow>(file, purpose, setProgress);
      setDone(`Uploaded ${stored.filename} as ${stored.id}`);
      await onUploaded();
    } catch (err) {
      setError(err);
    } finally {
      setProgress(null);
    }
  };
  return (
    <form class="panel grid-form" onSubmit={submit}>
      <h2>Upload</h2>
      <label for="upload-file">File</label>
      <input id="upload-file" type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      <label for="upload-purpose">Purpose</label>
      <select id="upload-purpose" value={purpose} onChange={(e) => setPurpose(e.currentTarget.value)}>
        <option value="fine-tune">fine-tune (JSON Lines dataset)</option>
        <option value="batch">batch</option>
      </select>
      {progress !== null && (
        <>
          <label for="upload-progress">Progress</label>
          <progress id="upload-progress" max={1} value={progress}>
            {Math.round(progress * 100)}%
          </progress>
        </>
      )}
      {done && <p role="status">{done}</p>}
      {error !== null && <UploadError error={error} />}
      <button type="submit" disabled={!file || progress !== null}>
        Upload
      </button>
    </form>
  );
}

/** A refused dataset lists its bad lines; any other failure shows its message. */
function UploadError({ error }: { error: unknown }) {
  const lines = error instanceof ApiError ? lineErrors(error.message) : [];
  return (
    <div class="error" role="alert">
      <p>{lines.length > 0 ? 'The dataset was refused:' : messageOf(error)}</p>
      {lines.length > 0 && (
        <ul class="line-errors">
          {lines.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
