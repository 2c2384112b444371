import { useState } from 'preact/hooks';
import { rest } from '../api';
import { ErrorNote, Page, useAction, useLoad } from '../ui';

interface Label {
  id: string;
  name: string;
  description: string;
  color_code: string;
  is_universal: boolean;
  status: string;
}

export function LabelsPage() {
  const labels = useLoad(async () => (await rest<{ data: Label[] }>('GET', '/labels?page_size=100')).data, []);
  return (
    <Page title="Labels">
      <CreateLabelForm onCreated={labels.reload} />
      <h2>Labels</h2>
      <ErrorNote error={labels.error} />
      <ul class="labels">
        {labels.data?.map((label) => (
          <LabelRow key={`${label.id}-${label.color_code}`} label={label} onChanged={labels.reload} />
        ))}
      </ul>
    </Page>
  );
}

function CreateLabelForm({ onCreated }: { onCreated: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [color, setColor] = useState('#2563eb');
  const { error, onSubmit } = useAction();
  const submit = onSubmit(async () => {
    await rest('POST', '/labels', { name, description, color_code: color });
    setName('');
    setDescription('');
    await onCreated();
  });
  return (
    <form class="panel grid-form" onSubmit={submit}>
      <h2>New label</h2>
      <label for="label-name">Name</label>
      <input
        id="label-name"
        required
        pattern="[A-Za-z0-9_\-]+"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        aria-describedby="label-name-help"
      />
      <p id="label-name-help" class="hint">
        Letters, digits, <code>_</code> and <code>-</code>.
      </p>
      <label for="label-description">Description</label>
      <input id="label-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <label for="label-color">Colour</label>
      <input id="label-color" type="color" value={color} onInput={(e) => setColor(e.currentTarget.value)} />
      <ErrorNote error={error} />
      <button type="submit">Create label</button>
    </form>
  );
}

function LabelRow({ label, onChanged }: { label: Label; onChanged: () => Promise<void> }) {
  const [color, setColor] = useState(label.color_code || '#000000');
  const { error, run } = useAction();
  const inputId = `color-${label.id}`;
  const change = (method: string, body?: unknown) => async () => {
    await rest(method, `/labels/${encodeURIComponent(label.id)}`, body);
    await onChanged();
  };
  const save = () => run(change('PUT', { color_code: color }));
  const remove = () => run(change('DELETE'), `Delete the label ${label.name}? This cannot be undone.`);
  return (
    <li class="label-row">
      <span class="swatch" style={{ background: label.color_code }} aria-hidden="true" />
      <span class="label-name">{label.name}</span>
      <span class="muted">{label.description}</span>
      <label for={inputId} class="visually-hidden">
        Colour of {label.name}
      </label>
      <input id={inputId} type="color" value={color} onInput={(e) => setColor(e.currentTarget.value)} />
      <button type="button" class="secondary" disabled={color === label.color_code} onClick={() => void save()}>
        Save colour of {label.name}
      </button>
      {/* The universal labels (production, staging, development) cannot be deleted. */}
      {!label.is_universal && (
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete {label.name}
        </button>
      )}
      <ErrorNote error={error} />
    </li>
  );
}
