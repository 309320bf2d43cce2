// The console's shared pieces: the session in context, data loading with its three states,
// times, errors, scope-aware action buttons and the confirmation dialog. Screens compose these
// and hold no copy of them.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { Page, WorkflowRunClient } from 'workflow-run-client';
import { fieldOf, messageOf } from './api.js';
import { holds, type Session } from './session.js';
import type { StreamStatusValue } from './stream.js';
import type { Scope } from './vocabulary.js';

export interface ConsoleContext {
  session: Session;
  /** The client of the signed-in key: every call of every screen goes through it. */
  api: WorkflowRunClient;
  signOut(): void;
}

export const Context = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const value = useContext(Context);
  if (!value) throw new Error('useConsole outside the signed-in console');
  return value;
}

/** Whether the signed-in key holds the scope. */
export function useCan(scope: Scope): boolean {
  return holds(useConsole().session, scope);
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again (after a change); keeps the data shown meanwhile. */
  reload(): void;
  /** Replaces the data in place (a live update, an action's answer). */
  set(update: (data: T | undefined) => T | undefined): void;
}

/**
 * Loads with `load` whenever `deps` change. The latest call wins: an answer to an older call
 * (the user changed a filter meanwhile) is dropped.
 */
export function useLoad<T>(
  load: (api: WorkflowRunClient) => Promise<T>,
  deps: unknown[],
): Loaded<T> {
  const { api } = useConsole();
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const call = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load(api).then(
      (data) => call === latest.current && setState({ data, loading: false }),
      (error: unknown) => call === latest.current && setState({ error, loading: false }),
    );
    // The dependencies are the caller's: `load` is a new function on every render.
  }, [...deps, tick, api]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: useCallback(() => setTick((t) => t + 1), []),
    set: useCallback(
      (update: (data: T | undefined) => T | undefined) =>
        setState((s) => ({ ...s, data: update(s.data) })),
      [],
    ),
  };
}

/** Local time, with the exact ISO time on hover and to assistive technology. */
export function Time({ value, relative }: { value?: string | null; relative?: boolean }) {
  if (!value) return <span class="muted">—</span>;
  const date = new Date(value);
  const text = relative ? relativeTime(date) : localTime(date);
  return (
    <time dateTime={value} title={date.toISOString()}>
      {text}
    </time>
  );
}

const FORMAT = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

export function localTime(date: Date): string {
  return FORMAT.format(date);
}

/**
 * An ISO time as a datetime-local input's value, in the browser's time zone (to the minute, or
 * to the second); '' for none or an invalid time.
 */
export function localInputOf(iso: string, seconds = false): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, seconds ? 19 : 16);
}

/** A datetime-local input's value (the browser's time zone) as an ISO time; '' for none. */
export function isoOfLocalInput(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

function relativeTime(date: Date): string {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 60) return rtf.format(seconds, 'second');
  if (abs < 3600) return rtf.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(seconds / 3600), 'hour');
  return rtf.format(Math.round(seconds / 86400), 'day');
}

/** A message at the top of a screen or form: the API's own words. */
export function ErrorBanner({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <div class="banner error" role="alert">
      {title && <strong>{title}: </strong>}
      {messageOf(error)}
    </div>
  );
}

/** The API's message when it names this field (a JSON Pointer such as `/pages/0/name`). */
export function fieldError(error: unknown, field: string): string | undefined {
  return fieldOf(error) === field ? messageOf(error) : undefined;
}

/** Whether the error names a field among those a form shows (then it shows there, not on top). */
export function namesField(error: unknown, shown: (field: string) => boolean): boolean {
  const field = fieldOf(error);
  return field !== undefined && shown(field);
}

/** The message under a form field, tied to it by id for assistive technology. */
export function FieldMessage({ id, message }: { id: string; message?: string }) {
  if (!message) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/**
 * A button for an action that needs a scope. Without it the button is disabled and says why,
 * in words next to it (a disabled button takes no focus, so a tooltip alone would be missed).
 */
export function ActionButton({
  scope,
  children,
  class: className,
  ...props
}: { scope: Scope; class?: string } & ButtonHTMLAttributes<HTMLButtonElement>) {
  const can = useCan(scope);
  const reason = `Needs the ${scope} scope, which this key does not hold`;
  if (can) {
    return (
      <button type="button" class={className} data-scope={scope} {...props}>
        {children}
      </button>
    );
  }
  return (
    <span class="action-denied">
      <button
        type="button"
        class={className}
        data-scope={scope}
        disabled
        title={reason}
        aria-description={reason}
      >
        {children}
      </button>
      <small class="reason">needs {scope}</small>
    </span>
  );
}

export interface ConfirmOptions {
  title: string;
  body?: ComponentChildren;
  confirm: string;
  /** Asks for a reason, sent with the action (optional unless `reasonRequired`). */
  reason?: { label: string; required?: boolean; maxLength?: number };
  danger?: boolean;
}

type Pending = ConfirmOptions & { resolve(answer: { reason: string } | null): void };

let openConfirm: ((pending: Pending) => void) | null = null;

/** Asks the user to confirm; resolves with the reason typed, or null when cancelled. */
export function confirmAction(options: ConfirmOptions): Promise<{ reason: string } | null> {
  return new Promise((resolve) => {
    if (!openConfirm) throw new Error('no ConfirmHost mounted');
    openConfirm({ ...options, resolve });
  });
}

/** The one confirmation dialog (a native modal <dialog>: focus stays in it, Escape cancels). */
export function ConfirmHost() {
  const [pending, setPending] = useState<Pending | null>(null);
  const [reason, setReason] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    openConfirm = (p) => {
      setReason('');
      setPending(p);
    };
    return () => {
      openConfirm = null;
    };
  }, []);
  useEffect(() => {
    if (pending && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [pending]);
  const close = (answer: { reason: string } | null) => {
    pending?.resolve(answer);
    setPending(null);
    dialog.current?.close();
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        close(null);
      }}
    >
      {pending && (
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            close({ reason: reason.trim() });
          }}
        >
          <h2 id="confirm-title">{pending.title}</h2>
          {pending.body && <div class="confirm-body">{pending.body}</div>}
          {pending.reason && (
            <label class="field">
              <span>{pending.reason.label}</span>
              <textarea
                name="reason"
                value={reason}
                required={pending.reason.required}
                maxLength={pending.reason.maxLength}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </label>
          )}
          <div class="buttons">
            <button type="button" onClick={() => close(null)}>
              Back
            </button>
            <button type="submit" class={pending.danger ? 'danger' : 'primary'} autofocus>
              {pending.confirm}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}

/** A polite announcement of an action's result (read by screen readers, shown briefly). */
export function useNotice(): [ComponentChildren, (text: string) => void] {
  const [text, setText] = useState('');
  useEffect(() => {
    if (!text) return;
    const timer = setTimeout(() => setText(''), 6000);
    return () => clearTimeout(timer);
  }, [text]);
  return [
    <p class="notice" role="status" aria-live="polite">
      {text}
    </p>,
    setText,
  ];
}

/** A screen's title row, with its actions on the right. */
/** Where a screen's live event stream is, for a screen's header. */
export function StreamStatus({ stream }: { stream: StreamStatusValue }) {
  return (
    <p class="stream-state" role="status" aria-live="polite">
      <span class={`dot ${stream.state}`} aria-hidden="true" />
      {stream.state === 'live'
        ? 'Live'
        : stream.state === 'connecting'
          ? 'Connecting to live updates…'
          : stream.state === 'reconnecting'
            ? 'Reconnecting to live updates…'
            : `No live updates: ${messageOf(stream.error)}`}
    </p>
  );
}

export function ScreenHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Workflow runs`;
  }, [title]);
  return (
    <header class="screen-header">
      <h1>{title}</h1>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

/** A status, as a colored badge with its word (never color alone). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** Copies text to the clipboard, saying so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() =>
        navigator.clipboard.writeText(text).then(
          () => setDone(true),
          () => setDone(false),
        )
      }
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/**
 * "Load next page" under a list that grows in place: appends the next page's items (those not
 * shown already, by id) to the list's data, with its own loading and error state.
 */
export function LoadMore<T extends { id: string }>({
  list,
  fetch,
}: {
  list: Loaded<Page<T>>;
  fetch(cursor: string): Promise<Page<T>>;
}) {
  const [state, setState] = useState<{ loading: boolean; error: unknown }>({
    loading: false,
    error: null,
  });
  const cursor = list.data?.nextCursor;
  const load = async (from: string) => {
    setState({ loading: true, error: null });
    try {
      const next = await fetch(from);
      list.set((page) => ({
        items: [
          ...(page?.items ?? []),
          ...next.items.filter((item) => !page?.items.some((p) => p.id === item.id)),
        ],
        nextCursor: next.nextCursor,
        nextUrl: next.nextUrl,
      }));
      setState({ loading: false, error: null });
    } catch (e) {
      setState({ loading: false, error: e });
    }
  };
  return (
    <>
      <ErrorBanner error={state.error} title="The next page could not be loaded" />
      {cursor && (
        <div class="buttons">
          <button type="button" disabled={state.loading} onClick={() => void load(cursor)}>
            {state.loading ? 'Loading…' : 'Load next page'}
          </button>
        </div>
      )}
    </>
  );
}
