import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { chooseWorkspace, chosenWorkspace, forgetKey, listWorkspaces, onUnauthorised, storedKey } from './api';
import { BatchesPage } from './pages/batches';
import { FilesPage } from './pages/files';
import { JobPage } from './pages/job';
import { JobsPage } from './pages/jobs';
import { LabelsPage } from './pages/labels';
import { LogsPage } from './pages/logs';
import { PartialsPage } from './pages/partials';
import { PlaygroundPage } from './pages/playground';
import { SignIn } from './pages/sign-in';
import { UsagePage } from './pages/usage';
import { href, navigate, useRoute } from './router';
import './styles.css';
import { useLoad } from './ui';

const SECTIONS = [
  ['jobs', 'Fine-tuning'],
  ['files', 'Files'],
  ['batches', 'Batches'],
  ['partials', 'Prompt partials'],
  ['labels', 'Labels'],
  ['playground', 'Playground'],
  ['usage', 'Usage'],
  ['logs', 'Logs'],
] as const;

function CurrentPage({ route }: { route: string[] }) {
  const [section = 'jobs', id] = route;
  switch (section) {
    case 'files':
      return <FilesPage />;
    case 'partials':
      return <PartialsPage slug={id} />;
    case 'labels':
      return <LabelsPage />;
    case 'playground':
      return <PlaygroundPage model={id} />;
    case 'batches':
      return <BatchesPage />;
    case 'usage':
      return <UsagePage />;
    case 'logs':
      return <LogsPage id={id} />;
    default:
      return id ? <JobPage id={id} /> : <JobsPage />;
  }
}

/**
 * An organisation key's workspaces (a workspace key has its own only, and no switcher). Every page
 * then reads and writes in the chosen one; ids of the last one mean nothing there, so the section's
 * list is shown.
 */
function WorkspaceSwitcher({ section, onChosen }: { section: string; onChosen: (id: string) => void }) {
  const workspaces = useLoad(listWorkspaces, []);
  if (!workspaces.data) return null;
  const current = chosenWorkspace() ?? workspaces.data.find((w) => w.slug === 'default')?.id;
  const choose = (id: string) => {
    chooseWorkspace(id);
    onChosen(id);
    navigate(section);
  };
  return (
    <div class="workspace">
      <label for="workspace">Workspace</label>
      <select id="workspace" value={current} onChange={(e) => choose(e.currentTarget.value)}>
        {workspaces.data.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} ({w.slug})
          </option>
        ))}
      </select>
    </div>
  );
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const section = route[0] ?? 'jobs';
  const [workspace, setWorkspace] = useState(chosenWorkspace);
  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Gateway console</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map(([id, title]) => (
              <li key={id}>
                <a href={href(id)} aria-current={section === id ? 'page' : undefined}>
                  {title}
                </a>
              </li>
            ))}
            <li>
              <a href="explorer.html">GraphQL explorer</a>
            </li>
          </ul>
        </nav>
        <WorkspaceSwitcher section={section} onChosen={setWorkspace} />
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {/* Keyed by the workspace: every page loads again from the chosen one. */}
      <main id="main" tabIndex={-1} key={workspace ?? ''}>
        <CurrentPage route={route} />
      </main>
    </>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(() => storedKey() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(
    () =>
      onUnauthorised(() => {
        forgetKey();
        setNotice('The gateway refused the API key: sign in again.');
        setSignedIn(false);
      }),
    [],
  );
  const signOut = () => {
    forgetKey();
    setNotice(null);
    setSignedIn(false);
  };
  return signedIn ? <Shell onSignOut={signOut} /> : <SignIn notice={notice} onSignedIn={() => setSignedIn(true)} />;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
