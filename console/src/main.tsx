import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { forgetKey, onUnauthorised, storedKey } from './api';
import { FilesPage } from './pages/files';
import { JobPage } from './pages/job';
import { JobsPage } from './pages/jobs';
import { LabelsPage } from './pages/labels';
import { PartialsPage } from './pages/partials';
import { PlaygroundPage } from './pages/playground';
import { SignIn } from './pages/sign-in';
import { href, useRoute } from './router';
import './styles.css';

const SECTIONS = [
  ['jobs', 'Fine-tuning'],
  ['files', 'Files'],
  ['partials', 'Prompt partials'],
  ['labels', 'Labels'],
  ['playground', 'Playground'],
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
    default:
      return id ? <JobPage id={id} /> : <JobsPage />;
  }
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const section = route[0] ?? 'jobs';
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
            <li>
              <a href="/graphql">Apollo Sandbox</a>
            </li>
          </ul>
        </nav>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
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
