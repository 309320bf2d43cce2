// Sign-in: the user pastes an API key. It is checked with GET /get-current-api-key (which also
// says what the key may do) and then kept in sessionStorage only (session.ts).
import { useState } from 'preact/hooks';
import { clientOf, messageOf } from '../api.js';
import { saveSession, type Session } from '../session.js';

export function SignIn({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const trimmed = key.trim();
      if (!trimmed) throw new Error('Paste an API key.');
      const info = await clientOf(trimmed).getCurrentApiKey();
      const session = { key: trimmed, info };
      saveSession(session);
      setKey('');
      onSignedIn(session);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} aria-describedby="sign-in-help">
        <h1>Workflow runs console</h1>
        <p id="sign-in-help">
          Sign in with an API key of your organization. It is kept in this tab only, and forgotten
          when you sign out or close the tab.
        </p>
        <label class="field">
          <span>API key</span>
          <input
            type="password"
            name="api-key"
            autoComplete="off"
            spellcheck={false}
            required
            value={key}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'sign-in-error' : undefined}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="field-error" id="sign-in-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
