import { useEffect, useMemo, useState } from 'preact/hooks';
import { graphql, rest } from '../api';
import { diffLines } from '../diff';
import { href, navigate } from '../router';
import { ErrorNote, Page, formatTime, useAction, useLoad } from '../ui';

interface Version {
  id: string;
  version: number;
  string: string;
  description: string;
  createdAt: string;
}

interface PromptPartial {
  id: string;
  slug: string;
  name: string;
  status: string;
  lastUpdatedAt: string;
  defaultVersion: { version: number };
  versions: Version[];
}

const PARTIALS = `query ConsolePartials($workspaceId: String) {
  promptPartials(workspaceId: $workspaceId) { id slug name status lastUpdatedAt defaultVersion { version } versions { id version string description createdAt } }
}`;

export function PartialsPage({ slug }: { slug?: string }) {
  const partials = useLoad(async () => (await graphql<{ promptPartials: PromptPartial[] }>(PARTIALS)).promptPartials, []);
  const selected = partials.data?.find((p) => p.slug === slug);
  return (
    <Page title="Prompt partials">
      <NewPartialForm onCreated={partials.reload} />
      <ErrorNote error={partials.error} />
      <div class="split">
        <nav aria-label="Partials" class="side-list">
          {partials.data && partials.data.length === 0 && <p>No partial yet.</p>}
          <ul>
            {partials.data?.map((p) => (
              <li key={p.id}>
                <a href={href('partials', p.slug)} aria-current={p.slug === slug ? 'page' : undefined}>
                  {p.name}
                </a>{' '}
                <span class="muted">
                  {p.slug} · v{p.defaultVersion.version}
                </span>
              </li>
            ))}
          </ul>
        </nav>
        <div class="split-main">
          {selected ? <PartialDetail key={selected.id} partial={selected} onChanged={partials.reload} /> : <p>Pick a partial to see its versions.</p>}
        </div>
      </div>
    </Page>
  );
}

/** A new partial with its first version; the page then shows it. */
function NewPartialForm({ onCreated }: { onCreated: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const [description, setDescription] = useState('');
  const { error, onSubmit } = useAction();
  const submit = onSubmit(async () => {
    const body = { name, string: text, ...(description ? { version_description: description } : {}) };
    const created = await rest<{ slug: string }>('POST', '/prompts/partials', body);
    setName('');
    setText('');
    setDescription('');
    await onCreated();
    navigate('partials', created.slug);
  });
  return (
    <details class="panel">
      <summary>New partial</summary>
      <form class="grid-form" onSubmit={submit}>
        <label for="partial-name">Name</label>
        <input id="partial-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="partial-text">Text</label>
        <textarea id="partial-text" rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <label for="partial-description">Version description (optional)</label>
        <input id="partial-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <ErrorNote error={error} />
        <button type="submit">Create partial</button>
      </form>
    </details>
  );
}

function PartialDetail({ partial, onChanged }: { partial: PromptPartial; onChanged: () => Promise<void> }) {
  const versions = partial.versions; // newest first
  const [left, setLeft] = useState(versions[1]?.version ?? versions[0].version);
  const [right, setRight] = useState(versions[0].version);
  const { error, run } = useAction();
  const [status, setStatus] = useState<string | null>(null);
  useEffect(() => setStatus(null), [partial.defaultVersion.version]);
  const byNumber = (n: number) => versions.find((v) => v.version === n) ?? versions[0];
  const path = `/prompts/partials/${encodeURIComponent(partial.slug)}`;
  const makeDefault = (version: number) =>
    run(async () => {
      await rest('PUT', `${path}/makeDefault`, { version });
      await onChanged();
      setStatus(`Version ${version} is now the default`);
    });
  const remove = () =>
    run(async () => {
      await rest('DELETE', path);
      await onChanged();
      navigate('partials');
    }, `Delete the partial ${partial.name} and all its versions? Messages using {{>${partial.slug}}} will be refused.`);
  return (
    <>
      <h2>{partial.name}</h2>
      <p class="muted">
        Use it in a message as <code>{`{{>${partial.slug}}}`}</code>. Default version:{' '}
        <strong data-testid="default-version">{partial.defaultVersion.version}</strong>
      </p>
      {status && <p role="status">{status}</p>}
      <ErrorNote error={error} />
      <div class="compare">
        <VersionColumn
          side="left"
          versions={versions}
          selected={byNumber(left)}
          defaultVersion={partial.defaultVersion.version}
          onSelect={setLeft}
          onMakeDefault={makeDefault}
        />
        <VersionColumn
          side="right"
          versions={versions}
          selected={byNumber(right)}
          defaultVersion={partial.defaultVersion.version}
          onSelect={setRight}
          onMakeDefault={makeDefault}
        />
      </div>
      <DiffView left={byNumber(left)} right={byNumber(right)} />
      <NewVersionForm partial={partial} text={versions[0].string} onSaved={onChanged} />
      <p>
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete partial {partial.name}
        </button>
      </p>
    </>
  );
}

interface ColumnProps {
  side: string;
  versions: Version[];
  selected: Version;
  defaultVersion: number;
  onSelect: (n: number) => void;
  onMakeDefault: (n: number) => Promise<void>;
}

function VersionColumn({ side, versions, selected, defaultVersion, onSelect, onMakeDefault }: ColumnProps) {
  const isDefault = selected.version === defaultVersion;
  const id = `version-${side}`;
  return (
    <div class="version" data-side={side}>
      <label for={id}>{side === 'left' ? 'Older side' : 'Newer side'}</label>
      <select id={id} value={selected.version} onChange={(e) => onSelect(Number(e.currentTarget.value))}>
        {versions.map((v) => (
          <option key={v.id} value={v.version}>
            Version {v.version}
            {v.description ? ` — ${v.description}` : ''}
          </option>
        ))}
      </select>
      <pre class="version-text">{selected.string}</pre>
      <p class="muted">Saved {formatTime(selected.createdAt)}</p>
      {isDefault ? (
        <p>
          <strong>Default version</strong>
        </p>
      ) : (
        <button type="button" onClick={() => void onMakeDefault(selected.version)}>
          Make version {selected.version} default
        </button>
      )}
    </div>
  );
}

function NewVersionForm({ partial, text, onSaved }: { partial: PromptPartial; text: string; onSaved: () => Promise<void> }) {
  const [value, setValue] = useState(text);
  const [description, setDescription] = useState('');
  const { error, onSubmit } = useAction();
  const save = onSubmit(async () => {
    await rest('PUT', `/prompts/partials/${encodeURIComponent(partial.slug)}`, { string: value, ...(description ? { description } : {}) });
    await onSaved();
  });
  return (
    <form class="panel grid-form" onSubmit={save}>
      <h3>Save a new version</h3>
      <label for="new-version-text">Text</label>
      <textarea id="new-version-text" rows={5} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      <label for="new-version-description">Description (optional)</label>
      <input id="new-version-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <ErrorNote error={error} />
      <button type="submit" disabled={value === text}>
        Save version
      </button>
    </form>
  );
}

function DiffView({ left, right }: { left: Version; right: Version }) {
  const diff = useMemo(() => diffLines(left.string, right.string), [left, right]);
  return (
    <>
      <h3>
        Changes from version {left.version} to version {right.version}
      </h3>
      <pre class="diff" aria-label={`Line changes from version ${left.version} to version ${right.version}`}>
        {diff.map((line, i) => (
          <div key={i} class={`diff-${line.kind}`}>
            <span aria-hidden="true">{line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  '}</span>
            {line.kind !== 'same' && <span class="visually-hidden">{line.kind}: </span>}
            {line.text}
          </div>
        ))}
      </pre>
    </>
  );
}
