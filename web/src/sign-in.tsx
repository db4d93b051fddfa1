// Sign-in with an API key: the server answers with a session cookie and the CSRF token.
import { useState } from 'preact/hooks';
import { ApiError, describe, post } from './api.js';
import type { Session } from './types.js';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await post('/v1/session', { body: { json: { key: key.trim() } } }));
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That key is not valid.' : describe(err));
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>callbridge console</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="current-password"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby="api-key-help"
        />
        <p id="api-key-help" class="hint">
          An API key from <code>npx callbridge keys create</code>, or the admin token in{' '}
          <code>$DATA_DIR/admin-token</code>.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
