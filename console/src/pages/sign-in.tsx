import { useState } from 'preact/hooks';
import { forgetKey, rest, storeKey } from '../api';
import { ErrorNote } from '../ui';

/**
 * The key is checked with one cheap call before it is kept; it is stored in session storage only and
 * the form never submits (so the key cannot end up in the URL or the history).
 */
export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    storeKey(key.trim());
    try {
      await rest('GET', '/fine_tuning/jobs?limit=1');
      onSignedIn();
    } catch (err) {
      forgetKey();
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Gateway console</h1>
      <form onSubmit={submit} method="post" action="#">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby="api-key-help"
        />
        <p id="api-key-help" class="hint">
          Kept in this tab's session storage only and sent as the <code>x-gateway-api-key</code> header.
        </p>
        {notice && !error && <p role="status">{notice}</p>}
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
}
