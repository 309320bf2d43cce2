// The audit log: the organization's administrative changes (templates, keys, webhook
// endpoints, bulk actions, settings), newest first, in keyset pages. Its filters (type, actor,
// time range) and the page's cursor live in the URL's query under the API's own names, so a
// view can be bookmarked and shared. Needs audit:read; without it the screen says so.
import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { AuditEntry, GetAuditLogQuery, Page } from 'workflow-run-client';
import { href, navigate, type Location } from '../router.js';
import {
  Empty,
  ErrorBanner,
  fieldError,
  FieldMessage,
  Loading,
  namesField,
  ScreenHeader,
  Time,
  useCan,
  useLoad,
  isoOfLocalInput,
  localInputOf,
} from '../ui.js';
import { AUDIT_TYPES, type Actor, type AuditType } from '../vocabulary.js';

const PAGE_SIZES = ['10', '25', '50', '100'] as const;
const DEFAULT_PAGE_SIZE = '25';

interface AuditFilter {
  types: AuditType[];
  actor: string;
  after: string;
  before: string;
  limit: string;
}

const EMPTY: AuditFilter = {
  types: [],
  actor: '',
  after: '',
  before: '',
  limit: DEFAULT_PAGE_SIZE,
};

function filterOf(query: URLSearchParams): AuditFilter {
  const limit = query.get('limit') ?? '';
  return {
    types: (query.get('type') ?? '')
      .split(',')
      .filter((t): t is AuditType => (AUDIT_TYPES as readonly string[]).includes(t)),
    actor: query.get('actor') ?? '',
    after: query.get('after') ?? '',
    before: query.get('before') ?? '',
    limit: (PAGE_SIZES as readonly string[]).includes(limit) ? limit : DEFAULT_PAGE_SIZE,
  };
}

/** The URL's (and the API's) query of a filter, with a page's cursor. */
function searchOf(filter: AuditFilter, cursor?: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (filter.types.length) query.type = filter.types.join(',');
  if (filter.actor) query.actor = filter.actor;
  if (filter.after) query.after = filter.after;
  if (filter.before) query.before = filter.before;
  if (filter.limit !== DEFAULT_PAGE_SIZE) query.limit = filter.limit;
  if (cursor) query.cursor = cursor;
  return query;
}

/** The API's query of a filter, with a page's cursor: the URL's, and the page size always. */
function queryOf(filter: AuditFilter, cursor?: string): GetAuditLogQuery {
  return {
    type: filter.types.length ? filter.types.join(',') : undefined,
    actor: filter.actor || undefined,
    after: filter.after || undefined,
    before: filter.before || undefined,
    limit: Number(filter.limit),
    cursor,
  };
}

export function AuditScreen({ location }: { location: Location }) {
  const can = useCan('audit:read');
  return (
    <section class="audit">
      <ScreenHeader title="Audit log" />
      {can ? (
        <AuditLog location={location} />
      ) : (
        <div class="banner info" role="note">
          <p>
            The audit log needs the <code>audit:read</code> scope, which this key does not hold.
          </p>
          <p>
            Sign in with a key that holds it to see who created, changed or revoked templates, API
            keys, webhook endpoints and bulk actions. Changes to single runs are in each run's
            history.
          </p>
        </div>
      )}
    </section>
  );
}

function AuditLog({ location }: { location: Location }) {
  const filter = filterOf(location.query);
  const cursor = location.query.get('cursor') || undefined;
  const search = new URLSearchParams(searchOf(filter, cursor)).toString();
  const entries = useLoad((api) => api.page('getAuditLog', queryOf(filter, cursor)), [search]);
  const formSearch = new URLSearchParams(searchOf(filter)).toString();
  const shown = (field: string) => ['/type', '/actor', '/after', '/before'].includes(field);
  return (
    <>
      <AuditFilterForm
        key={formSearch}
        value={filter}
        error={entries.error}
        onChange={(next) => navigate('/audit', searchOf(next), true)}
      />
      {!namesField(entries.error, shown) && (
        <ErrorBanner error={entries.error} title="The audit log could not be read" />
      )}
      {!entries.data && entries.loading && <Loading what="the audit log" />}
      {entries.data && (
        <section class="panel" aria-labelledby="audit-entries-title" aria-busy={entries.loading}>
          <h2 id="audit-entries-title">
            {cursor ? 'Older entries' : 'Latest entries'}
            {entries.loading && <span class="muted"> (updating…)</span>}
          </h2>
          {entries.data.items.length === 0 ? (
            <Empty>
              {formSearch ? 'No entry matches these filters.' : 'No administrative change yet.'}
            </Empty>
          ) : (
            <EntryTable entries={entries.data.items} filter={filter} />
          )}
          <Pager filter={filter} cursor={cursor} page={entries.data} />
        </section>
      )}
    </>
  );
}

function Pager({
  filter,
  cursor,
  page,
}: {
  filter: AuditFilter;
  cursor?: string;
  page: Page<AuditEntry>;
}) {
  if (!cursor && !page.nextCursor) return null;
  return (
    <nav class="pager" aria-label="Audit log pages">
      {cursor && <a href={href('/audit', searchOf(filter))}>Newest entries</a>}
      {page.nextCursor && (
        <a class="button" href={href('/audit', searchOf(filter, page.nextCursor))}>
          Next page
        </a>
      )}
    </nav>
  );
}

/** The filter's form; it applies when submitted. */
function AuditFilterForm({
  value,
  error,
  onChange,
}: {
  value: AuditFilter;
  error: unknown;
  onChange(filter: AuditFilter): void;
}) {
  const [draft, setDraft] = useState(value);
  const set = <K extends keyof AuditFilter>(key: K, v: AuditFilter[K]) =>
    setDraft({ ...draft, [key]: v });
  const groups = groupTypes();
  const typeError = fieldError(error, '/type');
  return (
    <form
      class="panel audit-filter"
      aria-label="Filter the audit log"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(draft);
      }}
    >
      <details open={value.types.length > 0}>
        <summary>Actions {draft.types.length ? `(${draft.types.length} chosen)` : '(any)'}</summary>
        <div class="audit-types">
          {groups.map(([subject, types]) => (
            <fieldset key={subject}>
              <legend>{subject}</legend>
              {types.map((type) => (
                <label key={type} class="check">
                  <input
                    type="checkbox"
                    checked={draft.types.includes(type)}
                    onChange={(event) =>
                      set(
                        'types',
                        event.currentTarget.checked
                          ? [...draft.types, type]
                          : draft.types.filter((t) => t !== type),
                      )
                    }
                  />{' '}
                  {type.slice(type.indexOf('.') + 1).replace('_', ' ')}
                </label>
              ))}
            </fieldset>
          ))}
        </div>
        <FieldMessage id="audit-type-error" message={typeError} />
      </details>
      <div class="filters">
        <TextField
          id="audit-actor"
          label="Actor"
          hint="a key's or a schedule's id, system or admin_cli"
          value={draft.actor}
          error={fieldError(error, '/actor')}
          onInput={(v) => set('actor', v.trim())}
        />
        <TimeField
          id="audit-after"
          label="After"
          value={draft.after}
          error={fieldError(error, '/after')}
          onInput={(v) => set('after', v)}
        />
        <TimeField
          id="audit-before"
          label="Before"
          value={draft.before}
          error={fieldError(error, '/before')}
          onInput={(v) => set('before', v)}
        />
        <label class="field" for="audit-limit">
          <span>Per page</span>
          <select
            id="audit-limit"
            value={draft.limit}
            onChange={(event) => set('limit', event.currentTarget.value)}
          >
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div class="buttons">
        <button
          type="button"
          onClick={() => {
            setDraft(EMPTY);
            onChange(EMPTY);
          }}
        >
          Clear
        </button>
        <button type="submit" class="primary">
          Apply
        </button>
      </div>
    </form>
  );
}

function TextField(props: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  error?: string;
  onInput(value: string): void;
}) {
  const described = [props.hint && `${props.id}-hint`, props.error && `${props.id}-error`]
    .filter(Boolean)
    .join(' ');
  return (
    <div class="field">
      <label for={props.id}>
        <span>{props.label}</span>
      </label>
      <input
        id={props.id}
        value={props.value}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
      {props.hint && (
        <small class="muted" id={`${props.id}-hint`}>
          {props.hint}
        </small>
      )}
      <FieldMessage id={`${props.id}-error`} message={props.error} />
    </div>
  );
}

/** A date-time in the browser's time zone, kept as an ISO time. */
function TimeField(props: {
  id: string;
  label: string;
  value: string;
  error?: string;
  onInput(value: string): void;
}) {
  return (
    <div class="field">
      <label for={props.id}>
        <span>{props.label}</span>
      </label>
      <input
        id={props.id}
        type="datetime-local"
        step="1"
        value={localInputOf(props.value, true)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={props.error ? `${props.id}-error` : undefined}
        onInput={(event) => props.onInput(isoOfLocalInput(event.currentTarget.value))}
      />
      <FieldMessage id={`${props.id}-error`} message={props.error} />
    </div>
  );
}

const SUBJECTS: Record<string, string> = {
  template: 'Templates',
  api_key: 'API keys',
  webhook_endpoint: 'Webhook endpoints',
  bulk_action: 'Bulk actions',
  schedule: 'Schedules',
  organization: 'Organization',
};

function groupTypes(): Array<[string, AuditType[]]> {
  const groups = new Map<string, AuditType[]>();
  for (const type of AUDIT_TYPES) {
    const subject = SUBJECTS[type.slice(0, type.indexOf('.'))] ?? 'Other';
    groups.set(subject, [...(groups.get(subject) ?? []), type]);
  }
  return [...groups];
}

function EntryTable({ entries, filter }: { entries: AuditEntry[]; filter: AuditFilter }) {
  return (
    <table class="cards audit-table">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Actor</th>
          <th scope="col">Action</th>
          <th scope="col">Target</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td data-label="Time">
              <Time value={entry.at} />
            </td>
            <td data-label="Actor">
              <ActorView actor={entry.actor} filter={filter} />
            </td>
            <td data-label="Action">
              <code>{entry.type}</code>
            </td>
            <td data-label="Target">
              <Target entry={entry} />
            </td>
            <td data-label="Details">
              <KeyValues data={entry.data} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Who made the change; a link shows only that actor's entries. */
function ActorView({ actor, filter }: { actor: Actor; filter: AuditFilter }) {
  const ref = actor.type === 'api_key' || actor.type === 'schedule' ? actor.id : actor.type;
  const text =
    actor.type === 'api_key'
      ? (actor.name ?? 'API key')
      : actor.type === 'schedule'
        ? 'schedule'
        : actor.type === 'system'
          ? 'the service'
          : 'admin CLI';
  const link =
    filter.actor === ref ? (
      <span>{text}</span>
    ) : (
      <a
        href={href('/audit', searchOf({ ...filter, actor: ref }))}
        title="Only this actor's entries"
      >
        {text}
      </a>
    );
  return (
    <span class="audit-actor">
      {link}{' '}
      {actor.type === 'api_key' ? (
        <code class="muted">key {actor.id}</code>
      ) : actor.type === 'schedule' ? (
        <a href={href(`/schedules/${encodeURIComponent(actor.id)}`)} title="The schedule">
          <code>{actor.id}</code>
        </a>
      ) : (
        <code class="muted">{actor.type}</code>
      )}
    </span>
  );
}

/** What changed: its kind, its id, and a link to it where the console has a screen for it. */
function Target({ entry }: { entry: AuditEntry }) {
  const subject = entry.type.slice(0, entry.type.indexOf('.'));
  const id = <code>{entry.targetId}</code>;
  let link: ComponentChildren = id;
  if (subject === 'template')
    link = <a href={href(`/templates/${encodeURIComponent(entry.targetId)}`)}>{id}</a>;
  if (subject === 'bulk_action')
    link = <a href={href('/bulk', { action: entry.targetId })}>{id}</a>;
  if (subject === 'schedule')
    link = <a href={href(`/schedules/${encodeURIComponent(entry.targetId)}`)}>{id}</a>;
  return (
    <span>
      <span class="muted">{(SUBJECTS[subject] ?? subject).replace(/s$/, '').toLowerCase()}</span>{' '}
      {link}
    </span>
  );
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** A compact key: value view of an object (an entry's data, a bulk action's filter). */
export function KeyValues({ data, label }: { data: Record<string, unknown>; label?: string }) {
  const entries = Object.entries(data).filter(([, v]) => v !== undefined && v !== null);
  if (entries.length === 0) return <span class="muted">{label ? 'none' : '—'}</span>;
  return (
    <dl class="kv">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}:</dt> <dd>{valueView(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

function valueView(value: unknown): ComponentChildren {
  if (typeof value === 'string') return ISO_TIME.test(value) ? <Time value={value} /> : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>;
    return value.map((v, i) => (
      <Fragment key={i}>
        {i > 0 && ', '}
        <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
      </Fragment>
    ));
  }
  if (value && typeof value === 'object')
    return <KeyValues data={value as Record<string, unknown>} />;
  return String(value);
}
