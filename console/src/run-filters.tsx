// The runs' filter, as the runs screen and the bulk actions screen show it. Its values live in
// the URL's query under the API's own parameter names (status, template_id, template_version,
// assignee, overdue, created_after, …, label repeated, schedule_id), so a view can be bookmarked and shared, and the query of
// the API call is the URL's filter as it stands.
import { useState } from 'preact/hooks';
import type { CountWorkflowRunsQuery } from 'workflow-run-client';
import { isoOfLocalInput, localInputOf, useLoad } from './ui.js';
import { RUN_STATUSES, type RunStatus } from './vocabulary.js';

export interface RunFilterValues {
  statuses: RunStatus[];
  templateId: string;
  /** A version of the template (digits), or '' for any; only with templateId. */
  templateVersion: string;
  assignee: string;
  /** '' (either), 'true' or 'false'. */
  overdue: '' | 'true' | 'false';
  createdAfter: string;
  createdBefore: string;
  updatedAfter: string;
  updatedBefore: string;
  /** key:value pairs. */
  labels: string[];
  /** The runs a schedule created: its id. */
  scheduleId: string;
}

export const EMPTY_FILTER: RunFilterValues = {
  statuses: [],
  templateId: '',
  templateVersion: '',
  assignee: '',
  overdue: '',
  createdAfter: '',
  createdBefore: '',
  updatedAfter: '',
  updatedBefore: '',
  labels: [],
  scheduleId: '',
};

/** The filter a URL's query holds (unknown values are left out). */
export function filterFromQuery(query: URLSearchParams): RunFilterValues {
  const overdue = query.get('overdue');
  const templateId = query.get('template_id') ?? '';
  const version = query.get('template_version') ?? '';
  return {
    statuses: (query.get('status') ?? '')
      .split(',')
      .filter((s): s is RunStatus => (RUN_STATUSES as readonly string[]).includes(s)),
    templateId,
    templateVersion: templateId && /^[1-9]\d{0,8}$/.test(version) ? version : '',
    assignee: query.get('assignee') ?? '',
    overdue: overdue === 'true' || overdue === 'false' ? overdue : '',
    createdAfter: query.get('created_after') ?? '',
    createdBefore: query.get('created_before') ?? '',
    updatedAfter: query.get('updated_after') ?? '',
    updatedBefore: query.get('updated_before') ?? '',
    labels: query.getAll('label').filter((l) => l.includes(':')),
    scheduleId: query.get('schedule_id') ?? '',
  };
}

/**
 * The API's query parameters of a filter (also the URL's): those of the list, the count and a
 * bulk action's filter alike.
 */
export function filterQuery(filter: RunFilterValues): CountWorkflowRunsQuery {
  return {
    status: filter.statuses.length ? filter.statuses.join(',') : undefined,
    template_id: filter.templateId || undefined,
    template_version:
      filter.templateId && filter.templateVersion ? Number(filter.templateVersion) : undefined,
    assignee: filter.assignee || undefined,
    overdue: filter.overdue ? filter.overdue === 'true' : undefined,
    created_after: filter.createdAfter || undefined,
    created_before: filter.createdBefore || undefined,
    updated_after: filter.updatedAfter || undefined,
    updated_before: filter.updatedBefore || undefined,
    label: filter.labels.length ? filter.labels : undefined,
    schedule_id: filter.scheduleId || undefined,
  };
}

/** The URL query of a filter, plus any other parameters given. */
export function filterSearch(filter: RunFilterValues, extra: Record<string, string> = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filterQuery(filter))) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, v);
    else params.append(name, String(value));
  }
  for (const [name, value] of Object.entries(extra)) params.set(name, value);
  return params;
}

export function isEmpty(filter: RunFilterValues): boolean {
  return Object.values(filterQuery(filter)).every((v) => v === undefined);
}

/**
 * The filter's form. Changes apply when submitted (Apply), so typing does not send a request
 * per key; `onChange` gets the whole new filter.
 */
export function RunFilterForm({
  value,
  onChange,
  idPrefix = 'filter',
}: {
  value: RunFilterValues;
  onChange(filter: RunFilterValues): void;
  idPrefix?: string;
}) {
  const [draft, setDraft] = useState(value);
  const [label, setLabel] = useState('');
  const templates = useLoad(
    (api) => api.page('getWorkflowTemplates', { limit: 100 }).then((p) => p.items),
    [],
  );
  const versions = useLoad(
    (api) =>
      draft.templateId
        ? api
            .page('getWorkflowTemplateVersions', { id: draft.templateId, limit: 100 })
            .then((p) => p.items)
        : Promise.resolve([]),
    [draft.templateId],
  );
  const set = <K extends keyof RunFilterValues>(key: K, v: RunFilterValues[K]) =>
    setDraft({ ...draft, [key]: v });
  const id = (name: string) => `${idPrefix}-${name}`;
  const addLabel = () => {
    const text = label.trim();
    if (!text.includes(':') || draft.labels.includes(text)) return;
    set('labels', [...draft.labels, text]);
    setLabel('');
  };
  return (
    <form
      class="panel run-filter"
      aria-label="Filter runs"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(draft);
      }}
    >
      <fieldset class="statuses">
        <legend>Status</legend>
        {RUN_STATUSES.map((status) => (
          <label key={status} class="check">
            <input
              type="checkbox"
              checked={draft.statuses.includes(status)}
              onChange={(event) =>
                set(
                  'statuses',
                  event.currentTarget.checked
                    ? [...draft.statuses, status]
                    : draft.statuses.filter((s) => s !== status),
                )
              }
            />{' '}
            {status}
          </label>
        ))}
      </fieldset>
      <div class="filters">
        <label class="field" for={id('template')}>
          <span>Template</span>
          <select
            id={id('template')}
            value={draft.templateId}
            onChange={(event) =>
              setDraft({ ...draft, templateId: event.currentTarget.value, templateVersion: '' })
            }
          >
            <option value="">Any template</option>
            {(templates.data ?? []).map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
            {draft.templateId && !templates.data?.some((t) => t.id === draft.templateId) && (
              <option value={draft.templateId}>{draft.templateId}</option>
            )}
          </select>
        </label>
        {draft.templateId && (
          <label class="field" for={id('template-version')}>
            <span>Template version</span>
            <select
              id={id('template-version')}
              value={draft.templateVersion}
              onChange={(event) => set('templateVersion', event.currentTarget.value)}
            >
              <option value="">Any version</option>
              {(versions.data ?? []).map((v) => (
                <option key={v.version} value={String(v.version)}>
                  Version {v.version}
                </option>
              ))}
              {draft.templateVersion &&
                !versions.data?.some((v) => String(v.version) === draft.templateVersion) && (
                  <option value={draft.templateVersion}>Version {draft.templateVersion}</option>
                )}
            </select>
          </label>
        )}
        <label class="field" for={id('assignee')}>
          <span>Assignee</span>
          <input
            id={id('assignee')}
            value={draft.assignee}
            onInput={(event) => set('assignee', event.currentTarget.value)}
          />
        </label>
        <label class="field" for={id('overdue')}>
          <span>Overdue</span>
          <select
            id={id('overdue')}
            value={draft.overdue}
            onChange={(event) =>
              set('overdue', event.currentTarget.value as RunFilterValues['overdue'])
            }
          >
            <option value="">Either</option>
            <option value="true">Overdue</option>
            <option value="false">Not overdue</option>
          </select>
        </label>
        {(
          [
            ['createdAfter', 'Created after'],
            ['createdBefore', 'Created before'],
            ['updatedAfter', 'Updated after'],
            ['updatedBefore', 'Updated before'],
          ] as const
        ).map(([key, text]) => (
          <label class="field" for={id(key)} key={key}>
            <span>{text}</span>
            <input
              id={id(key)}
              type="datetime-local"
              value={localInputOf(draft[key])}
              onInput={(event) => set(key, isoOfLocalInput(event.currentTarget.value))}
            />
          </label>
        ))}
        <label class="field" for={id('schedule')}>
          <span>Created by schedule (id)</span>
          <input
            id={id('schedule')}
            value={draft.scheduleId}
            onInput={(event) => set('scheduleId', event.currentTarget.value.trim())}
          />
        </label>
        <div class="field">
          <label for={id('label')}>
            <span>Label (key:value)</span>
          </label>
          <div class="inline">
            <input
              id={id('label')}
              value={label}
              placeholder="customer:acme"
              onInput={(event) => setLabel(event.currentTarget.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter') {
                  event.preventDefault();
                  addLabel();
                }
              }}
            />
            <button type="button" onClick={addLabel}>
              Add
            </button>
          </div>
        </div>
      </div>
      {draft.labels.length > 0 && (
        <ul class="chips" aria-label="Labels to match">
          {draft.labels.map((l) => (
            <li key={l}>
              <code>{l}</code>{' '}
              <button
                type="button"
                aria-label={`Remove label ${l}`}
                onClick={() =>
                  set(
                    'labels',
                    draft.labels.filter((x) => x !== l),
                  )
                }
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="buttons">
        <button
          type="button"
          onClick={() => {
            setDraft(EMPTY_FILTER);
            onChange(EMPTY_FILTER);
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
