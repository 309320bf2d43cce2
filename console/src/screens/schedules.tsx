// The schedules: the organization's schedules, filtered by template and state (the URL's
// ?template_id= and ?state=, the API's own names), a keyset page at a time (?cursor=). Each row
// says its cadence in words, its state, its next time and what came of its last one. A schedule
// is opened, created (/schedules/new) and edited on its own screen (screens/schedule.tsx).
import { useState } from 'preact/hooks';
import type { GetWorkflowSchedulesQuery } from 'workflow-run-client';
import { href, navigate, type Location } from '../router.js';
import { cadenceWords } from '../schedule-words.js';
import {
  ActionButton,
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
} from '../ui.js';
import { SCHEDULE_STATES, type ScheduleState } from '../vocabulary.js';
import { FireSummary, ScheduleStateBadge, useTemplateNames } from './schedule-parts.js';

const PAGE_SIZE = 25;

interface ScheduleFilter {
  templateId: string;
  state: ScheduleState | '';
}

function filterOf(query: URLSearchParams): ScheduleFilter {
  const state = query.get('state') ?? '';
  return {
    templateId: query.get('template_id') ?? '',
    state: SCHEDULE_STATES.find((s) => s === state) ?? '',
  };
}

/** The URL's (and the API's) query of a filter, with a page's cursor. */
function searchOf(filter: ScheduleFilter, cursor?: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (filter.templateId) query.template_id = filter.templateId;
  if (filter.state) query.state = filter.state;
  if (cursor) query.cursor = cursor;
  return query;
}

function queryOf(filter: ScheduleFilter, cursor?: string): GetWorkflowSchedulesQuery {
  return {
    template_id: filter.templateId || undefined,
    state: filter.state || undefined,
    limit: PAGE_SIZE,
    cursor,
  };
}

export function SchedulesScreen({ location }: { location: Location }) {
  const canRead = useCan('schedules:read');
  return (
    <section class="schedules-screen">
      <ScreenHeader title="Schedules">
        <ActionButton
          scope="schedules:write"
          class="primary"
          onClick={() => navigate('/schedules/new')}
        >
          New schedule
        </ActionButton>
      </ScreenHeader>
      {canRead ? (
        <ScheduleList location={location} />
      ) : (
        <p class="banner info">
          This key does not hold the <code>schedules:read</code> scope, so it cannot list schedules.
          Sign in with a key that holds it to see them.
        </p>
      )}
    </section>
  );
}

function ScheduleList({ location }: { location: Location }) {
  const filter = filterOf(location.query);
  const cursor = location.query.get('cursor') || undefined;
  const search = new URLSearchParams(searchOf(filter, cursor)).toString();
  const list = useLoad(
    (api) => api.page('getWorkflowSchedules', queryOf(filter, cursor)),
    [search],
  );
  const names = useTemplateNames();
  const filtered = Boolean(filter.templateId || filter.state);
  const shown = (field: string) => field === '/template_id' || field === '/state';
  const formKey = new URLSearchParams(searchOf(filter)).toString();
  return (
    <>
      <ScheduleFilterForm
        key={formKey}
        value={filter}
        error={list.error}
        templates={names.list}
        onChange={(next) => navigate('/schedules', searchOf(next))}
      />
      {!namesField(list.error, shown) && (
        <ErrorBanner error={list.error} title="The schedules could not be read" />
      )}
      {!list.data && list.loading && <Loading what="schedules" />}
      {list.data && list.data.items.length === 0 && (
        <Empty>
          {cursor
            ? 'No more schedules.'
            : filtered
              ? 'No schedule matches this filter.'
              : 'No schedules yet: create one with “New schedule”.'}
        </Empty>
      )}
      {list.data && list.data.items.length > 0 && (
        <div class="panel">
          <table class="cards schedule-list" aria-busy={list.loading}>
            <caption class="tpl-sr">Schedules, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Template</th>
                <th scope="col">Cadence</th>
                <th scope="col">State</th>
                <th scope="col">Next time</th>
                <th scope="col">Last time</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((schedule) => (
                <tr key={schedule.id} data-schedule-id={schedule.id}>
                  <td data-label="Template">
                    <a
                      href={href(`/schedules/${encodeURIComponent(schedule.id)}`)}
                      aria-label={`Schedule of ${names.of(schedule.templateId)}: ${cadenceWords(schedule)}`}
                    >
                      {names.of(schedule.templateId)}
                    </a>
                    {schedule.templateVersion !== undefined && (
                      <span class="muted"> · version {schedule.templateVersion}</span>
                    )}
                  </td>
                  <td data-label="Cadence">{cadenceWords(schedule)}</td>
                  <td data-label="State">
                    <ScheduleStateBadge state={schedule.state} />
                  </td>
                  <td data-label="Next time">
                    {schedule.nextTimes[0] ? (
                      <Time value={schedule.nextTimes[0]} />
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                  <td data-label="Last time">
                    {schedule.lastFire ? (
                      <FireSummary fire={schedule.lastFire} />
                    ) : (
                      <span class="muted">none yet</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && (cursor || list.data.nextCursor) && (
        <nav class="pager" aria-label="Pages of schedules">
          {cursor && (
            <a class="button" href={href('/schedules', searchOf(filter))}>
              First page
            </a>
          )}
          {list.data.nextCursor && (
            <a class="button" href={href('/schedules', searchOf(filter, list.data.nextCursor))}>
              Next page
            </a>
          )}
        </nav>
      )}
    </>
  );
}

/** The filter's form; it applies when submitted. */
function ScheduleFilterForm({
  value,
  error,
  templates,
  onChange,
}: {
  value: ScheduleFilter;
  error: unknown;
  templates: Array<{ id: string; name: string }> | undefined;
  onChange(filter: ScheduleFilter): void;
}) {
  const [draft, setDraft] = useState(value);
  const templateError = fieldError(error, '/template_id');
  const stateError = fieldError(error, '/state');
  return (
    <form
      class="panel schedule-filter"
      aria-label="Filter schedules"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(draft);
      }}
    >
      <div class="filters">
        <div class="field">
          <label for="schedules-template">
            <span>Template</span>
          </label>
          {templates ? (
            <select
              id="schedules-template"
              value={draft.templateId}
              aria-invalid={templateError ? true : undefined}
              aria-describedby={templateError ? 'schedules-template-error' : undefined}
              onChange={(event) => setDraft({ ...draft, templateId: event.currentTarget.value })}
            >
              <option value="">Any template</option>
              {templates.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
              {draft.templateId && !templates.some((t) => t.id === draft.templateId) && (
                <option value={draft.templateId}>{draft.templateId}</option>
              )}
            </select>
          ) : (
            <input
              id="schedules-template"
              value={draft.templateId}
              placeholder="a template's id"
              aria-invalid={templateError ? true : undefined}
              aria-describedby={templateError ? 'schedules-template-error' : undefined}
              onInput={(event) =>
                setDraft({ ...draft, templateId: event.currentTarget.value.trim() })
              }
            />
          )}
          <FieldMessage id="schedules-template-error" message={templateError} />
        </div>
        <div class="field">
          <label for="schedules-state">
            <span>State</span>
          </label>
          <select
            id="schedules-state"
            value={draft.state}
            aria-invalid={stateError ? true : undefined}
            aria-describedby={stateError ? 'schedules-state-error' : undefined}
            onChange={(event) =>
              setDraft({ ...draft, state: event.currentTarget.value as ScheduleState | '' })
            }
          >
            <option value="">Active or paused</option>
            {SCHEDULE_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <FieldMessage id="schedules-state-error" message={stateError} />
        </div>
      </div>
      <div class="buttons">
        <button
          type="button"
          onClick={() => {
            const empty: ScheduleFilter = { templateId: '', state: '' };
            setDraft(empty);
            onChange(empty);
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
