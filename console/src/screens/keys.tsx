// API keys: the organization's keys (newest first, keyset pages), a form to create one with
// scopes and an optional expiry (only the scopes the signed-in key holds can be granted), and
// revoke and roll on each. A new key's secret is in the one answer that makes it, so it is
// shown once, here, with a copy button, and is gone when the user leaves the screen.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiKey, ApiKeyWithSecret, Page } from 'workflow-run-client';
import { fieldOf, FormError, messageOf } from '../api.js';
import { holds } from '../session.js';
import {
  ActionButton,
  confirmAction,
  CopyButton,
  Empty,
  ErrorBanner,
  FieldMessage,
  fieldError,
  Loading,
  namesField,
  ScreenHeader,
  Time,
  useConsole,
  useLoad,
  useNotice,
  isoOfLocalInput,
  LoadMore,
} from '../ui.js';
import { ALL_SCOPES, type Scope } from '../vocabulary.js';

const PAGE_SIZE = 50;

/**
 * A secret in the one answer that holds it: shown with a copy button and a plain note that it
 * will not be shown again. Focus moves to it, so a keyboard or screen reader user lands on it.
 */
export function ShownOnce({
  title,
  label,
  secret,
  children,
  onDone,
}: {
  title: string;
  /** What the secret is ("API key", "signing secret"), for its copy button. */
  label: string;
  secret: string;
  children?: ComponentChildren;
  onDone(): void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [secret]);
  return (
    <section class="panel shown-once" aria-labelledby="shown-once-title">
      <h2 id="shown-once-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p class="once-note">
        <strong>Shown once.</strong> Copy the {label} now and keep it somewhere safe: it is in this
        answer only and cannot be shown again, here or anywhere else.
      </p>
      <div class="secret">
        <span class="muted">The new {label}:</span>
        <code class="mono secret-value">{secret}</code>
        <CopyButton key={secret} text={secret} label={`Copy ${label}`} />
      </div>
      {children}
      <div class="buttons">
        <button type="button" onClick={onDone}>
          Done, hide it
        </button>
      </div>
    </section>
  );
}

type KeyState = 'active' | 'replaced' | 'expired' | 'revoked';

function stateOf(key: ApiKey, now = Date.now()): KeyState {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= now) return 'expired';
  if (key.replacedBy) return 'replaced';
  return 'active';
}

/** Colors borrowed from the run statuses; the word is always shown. */
const STATE_CLASS: Record<KeyState, string> = {
  active: 'status-completed',
  replaced: 'status-active',
  expired: 'status-failed',
  revoked: 'status-cancelled',
};

function KeyStateCell({ apiKey }: { apiKey: ApiKey }) {
  const state = stateOf(apiKey);
  return (
    <>
      <span class={`badge ${STATE_CLASS[state]}`}>{state}</span>
      {state === 'revoked' && (
        <div class="muted small">
          revoked <Time value={apiKey.revokedAt} />
        </div>
      )}
      {state === 'replaced' && (
        <div class="muted small">
          by a rolled key; works until <Time value={apiKey.expiresAt} />
        </div>
      )}
    </>
  );
}

function CreateKeyForm({ onCreated }: { onCreated(key: ApiKeyWithSecret): void }) {
  const { api, session } = useConsole();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const scopesError = fieldOf(error)?.startsWith('/scopes') ? messageOf(error) : undefined;
  const shown = (field: string) =>
    field === '/name' || field === '/expires_at' || field.startsWith('/scopes');
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    if (scopes.length === 0) {
      setError(new FormError('Choose at least one scope.', '/scopes'));
      return;
    }
    setBusy(true);
    try {
      const made = await api.createApiKey({
        name: name.trim(),
        scopes,
        expires_at: isoOfLocalInput(expires) || undefined,
      });
      setName('');
      setScopes([]);
      setExpires('');
      onCreated(made);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const nameError = fieldError(error, '/name');
  const expiryError = fieldError(error, '/expires_at');
  return (
    <form class="panel create-key" aria-labelledby="create-key-title" onSubmit={submit}>
      <h2 id="create-key-title">Create a key</h2>
      {!namesField(error, shown) && <ErrorBanner error={error} />}
      <label class="field" for="key-name">
        <span>Name</span>
        <input
          id="key-name"
          required
          maxLength={200}
          value={name}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? 'key-name-error' : undefined}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        <FieldMessage id="key-name-error" message={nameError} />
      </label>
      <fieldset
        class="scopes"
        aria-describedby={scopesError ? 'key-scopes-error scopes-help' : 'scopes-help'}
      >
        <legend>Scopes</legend>
        <p id="scopes-help" class="muted small">
          A key can grant only the scopes it holds itself.
        </p>
        <ul class="scope-choices">
          {ALL_SCOPES.map((scope) => {
            const held = holds(session, scope);
            return (
              <li key={scope}>
                <label class="check">
                  <input
                    type="checkbox"
                    name="scopes"
                    value={scope}
                    disabled={!held}
                    checked={scopes.includes(scope)}
                    aria-describedby={held ? undefined : `scope-${scope}-reason`}
                    onChange={(event) =>
                      setScopes(
                        event.currentTarget.checked
                          ? ALL_SCOPES.filter((s) => s === scope || scopes.includes(s))
                          : scopes.filter((s) => s !== scope),
                      )
                    }
                  />{' '}
                  {scope}
                </label>
                {!held && (
                  <small class="reason" id={`scope-${scope}-reason`}>
                    the signed-in key does not hold {scope}
                  </small>
                )}
              </li>
            );
          })}
        </ul>
        <FieldMessage id="key-scopes-error" message={scopesError} />
      </fieldset>
      <label class="field expiry" for="key-expires">
        <span>Expires (optional, your local time)</span>
        <input
          id="key-expires"
          type="datetime-local"
          value={expires}
          aria-invalid={expiryError ? true : undefined}
          aria-describedby={expiryError ? 'key-expires-error expiry-help' : 'expiry-help'}
          onInput={(event) => setExpires(event.currentTarget.value)}
        />
        <small id="expiry-help" class="muted">
          {session.info.expiresAt ? (
            <>
              Left empty, the new key expires with this one (
              <Time value={session.info.expiresAt} />
              ); it cannot outlive it.
            </>
          ) : (
            'Left empty, the key never expires.'
          )}
        </small>
        <FieldMessage id="key-expires-error" message={expiryError} />
      </label>
      <div class="buttons">
        <ActionButton scope="keys:manage" type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </ActionButton>
      </div>
    </form>
  );
}

function RollForm({
  apiKey,
  isSelf,
  onRolled,
  onCancel,
}: {
  apiKey: ApiKey;
  isSelf: boolean;
  onRolled(made: ApiKeyWithSecret): void;
  onCancel(): void;
}) {
  const { api } = useConsole();
  const [hours, setHours] = useState('24');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), [apiKey.id]);
  const overlapError = fieldError(error, '/overlap_hours');
  const name = apiKey.name ?? apiKey.prefix;
  const submit = async (event: Event) => {
    event.preventDefault();
    const overlap = Number(hours);
    const ok = await confirmAction({
      title: `Roll the key ${name}?`,
      body: (
        <p>
          A new key with the same name, scopes and expiry is made and shown once. The old key{' '}
          {overlap === 0 ? 'stops working now' : `keeps working for ${overlap} more hours`}.
          {isSelf && ' This is the key you are signed in with.'}
        </p>
      ),
      confirm: 'Roll key',
    });
    if (!ok) return;
    setBusy(true);
    setError(null);
    try {
      onRolled(
        await api.rollApiKey({
          id: apiKey.id,
          overlap_hours: overlap,
        }),
      );
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel roll-key" aria-labelledby="roll-key-title" onSubmit={submit}>
      <h2 id="roll-key-title">Roll the key {name}</h2>
      {!overlapError && <ErrorBanner error={error} />}
      <label class="field" for="roll-overlap">
        <span>Hours the old key keeps working (0–168)</span>
        <input
          id="roll-overlap"
          ref={input}
          type="number"
          min={0}
          max={168}
          step="any"
          required
          value={hours}
          aria-invalid={overlapError ? true : undefined}
          aria-describedby={overlapError ? 'roll-overlap-error' : undefined}
          onInput={(event) => setHours(event.currentTarget.value)}
        />
        <FieldMessage id="roll-overlap-error" message={overlapError} />
      </label>
      <div class="buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <ActionButton scope="keys:manage" type="submit" class="primary" disabled={busy}>
          {busy ? 'Rolling…' : 'Roll key'}
        </ActionButton>
      </div>
    </form>
  );
}

function KeyRow({
  apiKey,
  isSelf,
  onRoll,
  onRevoke,
}: {
  apiKey: ApiKey;
  isSelf: boolean;
  onRoll(): void;
  onRevoke(): void;
}) {
  const state = stateOf(apiKey);
  const usable = state === 'active';
  return (
    <tr>
      <td data-label="Name">
        {apiKey.name ?? <span class="muted">(no name)</span>}
        {isSelf && <span class="badge this-key">this key</span>}
      </td>
      <td data-label="Prefix">
        <code class="mono">{apiKey.prefix}…</code>
      </td>
      <td data-label="Scopes">
        {ALL_SCOPES.every((scope) => apiKey.scopes.includes(scope)) ? (
          'every scope'
        ) : (
          <ul class="scope-list">
            {apiKey.scopes.map((scope) => (
              <li key={scope}>{scope}</li>
            ))}
          </ul>
        )}
      </td>
      <td data-label="Created">
        <Time value={apiKey.createdAt} />
      </td>
      <td data-label="Expires">
        {apiKey.expiresAt ? <Time value={apiKey.expiresAt} /> : <span class="muted">never</span>}
      </td>
      <td data-label="Last used">
        {apiKey.lastUsedAt ? <Time value={apiKey.lastUsedAt} /> : <span class="muted">never</span>}
      </td>
      <td data-label="State">
        <KeyStateCell apiKey={apiKey} />
      </td>
      <td data-label="Actions">
        <div class="row-actions">
          {state === 'revoked' && <span class="muted">none</span>}
          {usable && (
            <ActionButton
              scope="keys:manage"
              aria-label={`Roll ${apiKey.name ?? apiKey.prefix}`}
              onClick={onRoll}
            >
              Roll
            </ActionButton>
          )}
          {state !== 'revoked' && (
            <ActionButton
              scope="keys:manage"
              class="danger"
              aria-label={`Revoke ${apiKey.name ?? apiKey.prefix}`}
              onClick={onRevoke}
            >
              Revoke
            </ActionButton>
          )}
        </div>
      </td>
    </tr>
  );
}

export function KeysScreen() {
  const { api, session, signOut } = useConsole();
  const keys = useLoad((a) => a.page('getApiKeys', { limit: PAGE_SIZE }), []);
  const [made, setMade] = useState<{ title: string; key: ApiKeyWithSecret } | null>(null);
  const [rolling, setRolling] = useState<ApiKey | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, notify] = useNotice();
  const selfId = session.info.id;

  const replace = (key: ApiKey) =>
    keys.set((page) =>
      page ? { ...page, items: page.items.map((k) => (k.id === key.id ? key : k)) } : page,
    );
  const prepend = (key: ApiKey) =>
    keys.set((page: Page<ApiKey> | undefined) =>
      page ? { ...page, items: [key, ...page.items.filter((k) => k.id !== key.id)] } : page,
    );
  const listed = ({ key: _secret, ...view }: ApiKeyWithSecret): ApiKey => view;

  const revoke = async (key: ApiKey) => {
    const isSelf = key.id === selfId;
    const name = key.name ?? key.prefix;
    const ok = await confirmAction({
      title: `Revoke the key ${name}?`,
      body: isSelf ? (
        <p>
          <strong>This is the key you are signed in with.</strong> Once it is revoked the console
          cannot use it any more and you are signed out. Every other client using it is refused too.
        </p>
      ) : (
        <p>Every client using this key is refused from now on. This cannot be undone.</p>
      ),
      confirm: 'Revoke key',
      danger: true,
    });
    if (!ok) return;
    setActionError(null);
    try {
      const revoked = await api.revokeApiKey({ id: key.id });
      if (isSelf) {
        signOut();
        return;
      }
      replace(revoked);
      if (rolling?.id === key.id) setRolling(null);
      notify(`Key ${name} revoked.`);
    } catch (e) {
      setActionError(e);
    }
  };

  return (
    <section class="keys-screen">
      <ScreenHeader title="API keys" />
      {notice}
      {made && (
        <ShownOnce
          title={made.title}
          label="API key"
          secret={made.key.key ?? ''}
          onDone={() => setMade(null)}
        >
          <p class="muted">
            Key <strong>{made.key.name}</strong> ({made.key.prefix}…), scopes{' '}
            {made.key.scopes.join(', ')}
            {made.key.expiresAt ? (
              <>
                , expires <Time value={made.key.expiresAt} />
              </>
            ) : (
              ', never expires'
            )}
            .
          </p>
        </ShownOnce>
      )}
      {rolling && (
        <RollForm
          apiKey={rolling}
          isSelf={rolling.id === selfId}
          onCancel={() => setRolling(null)}
          onRolled={(key) => {
            setRolling(null);
            setMade({ title: `New key for ${key.name ?? key.prefix}`, key });
            prepend(listed(key));
            // The old key now names its replacement and ends with the overlap.
            keys.reload();
          }}
        />
      )}
      <CreateKeyForm
        onCreated={(key) => {
          setMade({ title: `Key ${key.name ?? key.prefix} created`, key });
          prepend(listed(key));
        }}
      />
      <section class="panel" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        <ErrorBanner error={actionError} />
        {keys.error !== undefined && !keys.data && (
          <ErrorBanner error={keys.error} title="The keys could not be loaded" />
        )}
        {keys.loading && !keys.data && <Loading what="keys" />}
        {keys.data && keys.data.items.length === 0 && <Empty>No keys yet.</Empty>}
        {keys.data && keys.data.items.length > 0 && (
          <table class="cards keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.items.map((key) => (
                <KeyRow
                  key={key.id}
                  apiKey={key}
                  isSelf={key.id === selfId}
                  onRoll={() => setRolling(key)}
                  onRevoke={() => void revoke(key)}
                />
              ))}
            </tbody>
          </table>
        )}
        <LoadMore
          list={keys}
          fetch={(cursor) => api.page('getApiKeys', { limit: PAGE_SIZE, cursor })}
        />
      </section>
    </section>
  );
}
