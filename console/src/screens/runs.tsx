// The runs: counts by status, the filter (kept in the URL's query), a keyset page of the list
// (its cursor in the URL too, so a page can be bookmarked) and the live event stream: new runs
// that pass the filter appear at the top of the first page, changed runs update in place.
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  Page,
  RunEvent,
  WorkflowRunClient,
  WorkflowRunCounts,
  WorkflowRunSummary,
} from 'workflow-run-client';
import { href, navigate, type Location } from '../router.js';
import {
  filterFromQuery,
  filterQuery,
  filterSearch,
  isEmpty,
  RunFilterForm,
  type RunFilterValues,
} from '../run-filters.js';
import { openStream, type StreamStatusValue } from '../stream.js';
import {
  Empty,
  ErrorBanner,
  Loading,
  ScreenHeader,
  StreamStatus,
  StatusBadge,
  Time,
  useCan,
  useConsole,
  useLoad,
  type Loaded,
} from '../ui.js';
import { RUN_STATUSES } from '../vocabulary.js';

const DEFAULT_LIMIT = 50;
const NUMBER = new Intl.NumberFormat();

export function RunsScreen({ location }: { location: Location }) {
  const canRead = useCan('runs:read');
  if (!canRead) {
    return (
      <section>
        <ScreenHeader title="Runs" />
        <p class="banner info">
          This key does not hold the <code>runs:read</code> scope, so it cannot list runs. Sign in
          with a key that holds it to see the runs.
        </p>
      </section>
    );
  }
  return <RunsView location={location} />;
}

/** The page size the URL asks for (`?limit=`), within the API's bounds. */
function limitOf(query: URLSearchParams): number | undefined {
  const text = query.get('limit');
  if (!text || !/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 && value <= 1000 ? value : undefined;
}

function RunsView({ location }: { location: Location }) {
  const { api } = useConsole();
  const filter = filterFromQuery(location.query);
  const filterKey = filterSearch(filter).toString();
  const cursor = location.query.get('cursor') ?? '';
  const limit = limitOf(location.query);
  // The runs at a step of the template (?step=, only with a template): the insights link here.
  const step = stepOf(location.query, filter);
  /** The URL parameters kept across pages (the step: across changes that keep the template). */
  const paging: Record<string, string> = limit ? { limit: String(limit) } : {};
  const keep: Record<string, string> = step ? { ...paging, step } : paging;

  const counts = useLoad(
    (a) => a.countWorkflowRuns({ ...filterQuery(filter), step: step || undefined }),
    [filterKey, step],
  );
  const list = useLoad(
    (a) =>
      a.page('getWorkflowRuns', {
        ...filterQuery(filter),
        step: step || undefined,
        limit: limit ?? DEFAULT_LIMIT,
        cursor: cursor || undefined,
      }),
    [filterKey, step, cursor, limit],
  );
  const changed = useChanged();
  const stream = useRunsStream(api, filter, step, cursor, list, counts, changed.mark);

  const filtered = !isEmpty(filter) || !!step;
  // Open on a wide screen, or when a filter is applied; on a phone it folds away otherwise.
  const [filterOpen] = useState(() => filtered || window.matchMedia('(min-width: 721px)').matches);
  const apply = (next: RunFilterValues) =>
    navigate('/', filterSearch(next, next.templateId === filter.templateId ? keep : paging));

  return (
    <section class="runs-screen">
      <ScreenHeader title="Runs">
        <StreamStatus stream={stream} />
      </ScreenHeader>
      <Counts counts={counts} filter={filter} keep={keep} />
      {step && (
        <ul class="chips run-step-filter" aria-label="Filtered to a step">
          <li>
            Current step: <strong>{step}</strong>{' '}
            <a
              class="button"
              href={href('/', filterSearch(filter, paging))}
              aria-label={`Remove the filter by step ${step}`}
            >
              ×
            </a>
          </li>
        </ul>
      )}
      <details class="runs-filter" open={filterOpen}>
        <summary>
          Filter
          {filtered ? ' (applied)' : ''}
        </summary>
        <RunFilterForm key={filterKey} value={filter} onChange={apply} idPrefix="runs-filter" />
      </details>
      <RunList list={list} changed={changed.ids} filtered={filtered} />
      <Pages next={list.data?.nextCursor ?? null} cursor={cursor} filter={filter} keep={keep} />
    </section>
  );
}

/** The URL's ?step= (the current step's page name), kept only with a template. */
function stepOf(query: URLSearchParams, filter: RunFilterValues): string {
  return filter.templateId ? (query.get('step') ?? '') : '';
}

/** Runs changed by a live event, each marked for a moment (class `changed`). */
function useChanged() {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set());
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t)), []);
  const mark = (id: string) => {
    setIds((s) => new Set(s).add(id));
    clearTimeout(timers.current.get(id));
    timers.current.set(
      id,
      setTimeout(() => {
        timers.current.delete(id);
        setIds((s) => {
          const next = new Set(s);
          next.delete(id);
          return next;
        });
      }, 2000),
    );
  };
  return { ids, mark };
}

/**
 * Follows the organization's run events: a new run that passes the filter joins the top of the
 * first page, a changed run is updated where it is shown, and the counts are read again (at
 * most once a second, however many events come).
 */
function useRunsStream(
  api: WorkflowRunClient,
  filter: RunFilterValues,
  step: string,
  cursor: string,
  list: Loaded<Page<WorkflowRunSummary>>,
  counts: Loaded<WorkflowRunCounts>,
  mark: (id: string) => void,
): StreamStatusValue {
  const [state, setState] = useState<StreamStatusValue>({
    state: 'connecting',
  });
  // The stream stays open across filter changes; its handlers read the view as it is now.
  const now = useRef({ filter, step, cursor, list, counts, mark });
  now.current = { filter, step, cursor, list, counts, mark };
  useEffect(() => {
    let countsTimer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const refreshCounts = () => {
      if (countsTimer) return;
      countsTimer = setTimeout(() => {
        countsTimer = undefined;
        if (!closed) now.current.counts.reload();
      }, 1000);
    };
    const onEvent = (event: RunEvent) => {
      const run = event.data.run;
      refreshCounts();
      const view = now.current;
      if (event.type === 'run.deleted') {
        view.list.set(
          (page) => page && { ...page, items: page.items.filter((r) => r.id !== run.id) },
        );
        return;
      }
      if (event.type === 'run.created') {
        if (view.cursor) return; // only the first page shows the newest runs
        const local = passesFilter(
          view.filter,
          view.step,
          run,
          event.data.templateId,
          event.timestamp,
        );
        if (local === false) return;
        const add = () => {
          if (closed) return;
          now.current.list.set((page) =>
            page && !page.items.some((r) => r.id === run.id)
              ? { ...page, items: [run, ...page.items] }
              : page,
          );
          now.current.mark(run.id);
        };
        if (local === true) add();
        else {
          // Labels, the version and the schedule are not in the summary: the run in full tells them.
          const { labels: wanted, templateVersion, scheduleId } = view.filter;
          api.getWorkflowRun({ id: run.id }).then(
            (detail) =>
              wanted.every((l) => hasLabel(detail.labels, l)) &&
              (!templateVersion || String(detail.templateVersion) === templateVersion) &&
              (!scheduleId || detail.scheduleId === scheduleId) &&
              add(),
            () => undefined, // gone meanwhile, or unreadable: the next load will tell
          );
        }
        return;
      }
      view.list.set((page) => {
        if (!page) return page;
        const at = page.items.findIndex((r) => r.id === run.id);
        const shown = page.items[at];
        if (!shown || shown.lastActivity > run.lastActivity) return page;
        const items = page.items.slice();
        items[at] = run;
        return { ...page, items };
      });
      if (view.list.data?.items.some((r) => r.id === run.id)) view.mark(run.id);
    };
    const close = openStream(
      api,
      {},
      {
        onEvent,
        onState: (connected) => setState({ state: connected ? 'live' : 'reconnecting' }),
        onEnd: (error) => setState({ state: 'ended', error }),
      },
    );
    return () => {
      closed = true;
      clearTimeout(countsTimer);
      close();
    };
  }, [api]);
  return state;
}

function hasLabel(labels: Record<string, string>, pair: string): boolean {
  const at = pair.indexOf(':');
  return labels[pair.slice(0, at)] === pair.slice(at + 1);
}

/**
 * Whether a new run passes the filter, as far as its summary tells: true, false, or undefined
 * when only its labels, its template version or its schedule (not in the summary) can tell.
 */
function passesFilter(
  filter: RunFilterValues,
  step: string,
  run: WorkflowRunSummary,
  templateId: string | undefined,
  createdAt: string,
): boolean | undefined {
  if (filter.statuses.length && !filter.statuses.includes(run.status)) return false;
  if (filter.templateId && templateId !== filter.templateId) return false;
  if (filter.assignee && run.currentStepAssignee !== filter.assignee) return false;
  if (step && run.currentStepName !== step) return false;
  if (filter.overdue === 'true') return false; // a run is never overdue when it is created
  const created = Date.parse(createdAt);
  const updated = Date.parse(run.lastActivity);
  if (filter.createdAfter && !(created > Date.parse(filter.createdAfter))) return false;
  if (filter.createdBefore && !(created < Date.parse(filter.createdBefore))) return false;
  if (filter.updatedAfter && !(updated > Date.parse(filter.updatedAfter))) return false;
  if (filter.updatedBefore && !(updated < Date.parse(filter.updatedBefore))) return false;
  return filter.labels.length || filter.templateVersion || filter.scheduleId ? undefined : true;
}

function Counts({
  counts,
  filter,
  keep,
}: {
  counts: Loaded<WorkflowRunCounts>;
  filter: RunFilterValues;
  keep: Record<string, string>;
}) {
  if (counts.error) return <ErrorBanner error={counts.error} title="Counts" />;
  const data = counts.data;
  const shown = (n: number, over: boolean) => (over ? `${NUMBER.format(n)}+` : NUMBER.format(n));
  return (
    <nav class="run-counts" aria-label="Runs by status">
      <ul>
        {RUN_STATUSES.map((status) => {
          const only = filter.statuses.length === 1 && filter.statuses[0] === status;
          return (
            <li key={status}>
              <a
                href={href('/', filterSearch({ ...filter, statuses: [status] }, keep))}
                aria-current={only ? 'true' : undefined}
              >
                <span class="count">
                  {data ? shown(data.byStatus[status], data.exceeded.includes(status)) : '…'}
                </span>
                <span class="what">{status}</span>
              </a>
            </li>
          );
        })}
        <li class="total">
          <a href={href('/', filterSearch({ ...filter, statuses: [] }, keep))}>
            <span class="count">{data ? shown(data.total, data.exceeded.length > 0) : '…'}</span>
            <span class="what">in all</span>
          </a>
        </li>
      </ul>
    </nav>
  );
}

function RunList({
  list,
  changed,
  filtered,
}: {
  list: Loaded<Page<WorkflowRunSummary>>;
  changed: ReadonlySet<string>;
  filtered: boolean;
}) {
  if (list.error) return <ErrorBanner error={list.error} title="The runs could not be read" />;
  if (!list.data) return <Loading what="runs" />;
  if (list.data.items.length === 0) {
    return (
      <Empty>
        {filtered
          ? 'No run matches this filter.'
          : 'No runs yet. New runs appear here as they are created.'}
      </Empty>
    );
  }
  const now = Date.now();
  return (
    <div class="panel">
      <table class="cards run-list" aria-label="Runs, newest first" aria-busy={list.loading}>
        <thead>
          <tr>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Current step</th>
            <th scope="col">Assignee</th>
            <th scope="col">Due</th>
            <th scope="col">Last activity</th>
          </tr>
        </thead>
        <tbody>
          {list.data.items.map((run) => {
            const overdue =
              run.status === 'active' &&
              !!run.currentStepDueDate &&
              Date.parse(run.currentStepDueDate) < now;
            return (
              <tr
                key={run.id}
                class={changed.has(run.id) ? 'changed' : undefined}
                data-run-id={run.id}
              >
                <td data-label="Workflow">
                  <a href={href(`/runs/${encodeURIComponent(run.id)}`)}>{run.workflowName}</a>
                </td>
                <td data-label="Status">
                  <StatusBadge status={run.status} />
                </td>
                <td data-label="Current step">
                  {run.currentStepName ?? <span class="muted">—</span>}
                </td>
                <td data-label="Assignee">
                  {run.currentStepAssignee ?? <span class="muted">—</span>}
                </td>
                <td data-label="Due">
                  <Time value={run.currentStepDueDate} />
                  {overdue && <span class="overdue"> overdue</span>}
                </td>
                <td data-label="Last activity">
                  <Time value={run.lastActivity} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Pages({
  next,
  cursor,
  filter,
  keep,
}: {
  next: string | null;
  cursor: string;
  filter: RunFilterValues;
  keep: Record<string, string>;
}) {
  if (!next && !cursor) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {cursor && (
        <a class="button" href={href('/', filterSearch(filter, keep))}>
          First page
        </a>
      )}
      {next && (
        <a class="button" href={href('/', filterSearch(filter, { ...keep, cursor: next }))}>
          Next page
        </a>
      )}
    </nav>
  );
}
