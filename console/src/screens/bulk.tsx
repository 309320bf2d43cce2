// Bulk actions: pick the runs' filter (kept in the URL's query, as on the runs screen), see how
// many runs match it by status, then cancel or retry them all, or move those of one template
// from one of its versions to another (screens/bulk-migration.tsx: a dry run first counts the
// runs that would move). The action then runs on the workers; its progress is followed here
// (?action=<id> in the URL, so a reload or a shared link follows it too) until it completes,
// with the counts of runs done and skipped.
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  BulkAction,
  BulkCancelWorkflowRunsRequest,
  WorkflowRunClient,
  WorkflowRunCounts,
} from 'workflow-run-client';
import {
  bulkFilter,
  count,
  doneWords,
  planWords,
  SkippedList,
  started,
  titleOf,
  useBulkAction,
} from '../bulk-actions.js';
import { href, navigate, type Location } from '../router.js';
import {
  filterFromQuery,
  filterQuery,
  filterSearch,
  isEmpty,
  RunFilterForm,
  type RunFilterValues,
} from '../run-filters.js';
import {
  ActionButton,
  confirmAction,
  ErrorBanner,
  Loading,
  type Loaded,
  ScreenHeader,
  StatusBadge,
  Time,
  useConsole,
  useLoad,
} from '../ui.js';
import { RUN_STATUSES, type BulkActionKind, type RunStatus } from '../vocabulary.js';
import { KeyValues } from './audit.js';
import { MigratePanel } from './bulk-migration.js';

/** The actions started with a confirmation alone (a move has its own panel). */
type Simple = Exclude<BulkActionKind, 'migrate'>;

/** What each action changes, and the code the runs it leaves alone are counted under. */
const ACTIONS: Record<
  Simple,
  {
    verb: string;
    done: string;
    targets: RunStatus[];
    start(api: WorkflowRunClient, body: BulkCancelWorkflowRunsRequest): Promise<BulkAction>;
    label: string;
  }
> = {
  cancel: {
    verb: 'Cancel',
    done: 'cancelled',
    targets: ['pending', 'active'],
    start: (api, body) => api.bulkCancelWorkflowRuns(body),
    label: 'Cancel matching runs',
  },
  retry: {
    verb: 'Retry',
    done: 'retried',
    targets: ['failed'],
    start: (api, body) => api.bulkRetryWorkflowRuns(body),
    label: 'Retry matching runs',
  },
};

export function BulkScreen({ location }: { location: Location }) {
  const filter = filterFromQuery(location.query);
  const actionId = location.query.get('action') ?? '';
  const search = filterSearch(filter).toString();
  const counts = useLoad((api) => api.countWorkflowRuns(filterQuery(filter)), [search]);
  const show = (next: RunFilterValues, action = actionId, replace = true) =>
    navigate('/bulk', filterSearch(next, action ? { action } : {}), replace);

  return (
    <section class="bulk">
      <ScreenHeader title="Bulk actions" />
      {actionId && (
        <BulkProgress
          key={actionId}
          id={actionId}
          onFinished={counts.reload}
          onClose={() => show(filter, '')}
        />
      )}
      <h2 id="bulk-filter-title">Which runs</h2>
      <RunFilterForm key={search} value={filter} onChange={(next) => show(next)} idPrefix="bulk" />
      <MatchPanel filter={filter} counts={counts} />
      <ActionsPanel
        filter={filter}
        counts={counts.data}
        onStarted={(action) => {
          started.set(action.id, action);
          show(filter, action.id, false);
        }}
      />
    </section>
  );
}

/** How many runs match, by status, and a link to them in the runs list. */
function MatchPanel({
  filter,
  counts,
}: {
  filter: RunFilterValues;
  counts: Loaded<WorkflowRunCounts>;
}) {
  const data = counts.data;
  return (
    <section class="panel" aria-labelledby="bulk-match-title">
      <h2 id="bulk-match-title">Matching runs</h2>
      <ErrorBanner error={counts.error} title="The runs could not be counted" />
      {!data && counts.loading && <Loading what="the matching runs" />}
      {data && (
        <>
          <p class="bulk-total" aria-live="polite">
            <strong>{totalText(data)}</strong> {data.total === 1 ? 'run matches' : 'runs match'}{' '}
            {isEmpty(filter) ? 'with no filter (every run)' : 'this filter'}
            {counts.loading && <span class="muted"> (updating…)</span>}
          </p>
          <ul class="bulk-counts" aria-label="Matching runs by status">
            {RUN_STATUSES.map((status) => (
              <li key={status}>
                <StatusBadge status={status} />{' '}
                <span class="n">
                  {data.exceeded.includes(status)
                    ? `${count(data.limit)}+`
                    : count(data.byStatus[status])}
                </span>
              </li>
            ))}
          </ul>
          <p>
            <a href={href('/', filterSearch(filter))}>See these runs in the runs list</a>
          </p>
        </>
      )}
    </section>
  );
}

function totalText(data: WorkflowRunCounts): string {
  return data.exceeded.length ? `${count(Math.max(data.total, data.limit))}+` : count(data.total);
}

/** The two actions, each behind a confirmation stating how many runs it would change. */
function ActionsPanel({
  filter,
  counts,
  onStarted,
}: {
  filter: RunFilterValues;
  counts?: WorkflowRunCounts;
  onStarted(action: BulkAction): void;
}) {
  const { api } = useConsole();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const empty = isEmpty(filter);

  const [moving, setMoving] = useState(false);
  const template = filter.templateId;

  const start = async (kind: Simple) => {
    const spec = ACTIONS[kind];
    const affected = counts
      ? spec.targets.reduce((sum, status) => sum + counts.byStatus[status], 0)
      : undefined;
    const answer = await confirmAction({
      title: `${spec.verb} the matching runs?`,
      body: (
        <>
          <p>
            {counts ? (
              <>
                <strong>{totalText(counts)}</strong> runs match this filter
                {affected !== undefined && (
                  <>
                    ; <strong>{count(affected)}</strong> of them{' '}
                    {kind === 'cancel' ? 'are pending or active' : 'are failed'} and will be{' '}
                    {spec.done}
                  </>
                )}
                .
              </>
            ) : (
              'The number of matching runs is not known yet.'
            )}{' '}
            {kind === 'cancel'
              ? 'Runs that have already ended are skipped.'
              : 'Runs that are not failed are skipped.'}
          </p>
          <KeyValues data={bulkFilter(filter)} label="Filter" />
        </>
      ),
      confirm: spec.label,
      reason: { label: 'Reason (optional)', maxLength: 1000 },
      danger: kind === 'cancel',
    });
    if (!answer) return;
    setBusy(true);
    setError(null);
    try {
      const body = {
        filter: bulkFilter(filter),
        ...(answer.reason ? { reason: answer.reason } : {}),
      };
      const action = await spec.start(api, body);
      onStarted(action);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section class="panel" aria-labelledby="bulk-actions-title">
        <h2 id="bulk-actions-title">Change them</h2>
        <ErrorBanner error={error} title="The bulk action was refused" />
        <p class="muted">
          Cancel stops every matching run that is pending or active. Retry starts every matching
          failed run again. Move to version moves the matching pending or active runs of a template
          from one of its versions to another. Each run is changed as a single cancel, retry or move
          would change it, with its event in the run's history; runs created after you start are not
          matched.
        </p>
        {empty && (
          <p class="banner info" id="bulk-empty">
            Pick at least one filter first: a bulk action on every run of the organization is
            refused.
          </p>
        )}
        <div class="buttons bulk-buttons">
          <ActionButton
            scope="runs:write"
            class="danger"
            disabled={empty || busy}
            aria-describedby={empty ? 'bulk-empty' : undefined}
            onClick={() => void start('cancel')}
          >
            {ACTIONS.cancel.label}
          </ActionButton>
          <ActionButton
            scope="runs:write"
            class="primary"
            disabled={empty || busy}
            aria-describedby={empty ? 'bulk-empty' : undefined}
            onClick={() => void start('retry')}
          >
            {ACTIONS.retry.label}
          </ActionButton>
          <ActionButton
            scope="runs:write"
            disabled={!template || busy}
            aria-describedby={template ? undefined : 'bulk-migrate-template'}
            aria-expanded={moving && !!template}
            aria-controls={moving && template ? 'bulk-migrate' : undefined}
            onClick={() => setMoving((m) => !m)}
          >
            Move to version…
          </ActionButton>
        </div>
        {!template && (
          <p class="muted" id="bulk-migrate-template">
            Move to version needs a template in the filter: a move is from one version of a template
            to another. Pick the template above and apply.
          </p>
        )}
      </section>
      {moving && template && (
        <MigratePanel
          key={`${template}:${filter.templateVersion}`}
          filter={filter}
          onClose={() => setMoving(false)}
          onStarted={(action) => {
            setMoving(false);
            onStarted(action);
          }}
        />
      )}
    </>
  );
}

function BulkProgress({
  id,
  onFinished,
  onClose,
}: {
  id: string;
  onFinished(): void;
  onClose(): void;
}) {
  const { action, error } = useBulkAction(id);
  const finished = action?.status === 'completed';
  const reported = useRef(false);
  useEffect(() => {
    if (finished && !reported.current) {
      reported.current = true;
      onFinished();
    }
  }, [finished]);

  const skipped = action ? Object.values(action.skipped).reduce((a, b) => a + b, 0) : 0;
  const handled = action ? action.done + skipped : 0;
  const matched = action?.matched ?? 0;
  const title = action ? titleOf(action) : 'Bulk action';
  return (
    <section class="panel bulk-progress" aria-labelledby="bulk-progress-title">
      <div class="bulk-progress-head">
        <h2 id="bulk-progress-title">
          {title} {action && <StatusBadge status={action.status} />}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorBanner
        error={error}
        title={action ? 'Its progress could not be read (trying again)' : 'The bulk action'}
      />
      {!action && !error && <Loading what="the bulk action" />}
      {action && (
        <>
          <progress
            id="bulk-progress-bar"
            aria-label={
              action.action !== 'migrate'
                ? `Progress of the bulk ${action.action}`
                : action.dryRun
                  ? 'Progress of the dry run'
                  : 'Progress of the bulk move'
            }
            aria-describedby="bulk-progress-text"
            value={finished && matched === 0 ? 1 : handled}
            max={Math.max(matched, 1)}
          />
          <p id="bulk-progress-text" class="bulk-progress-text">
            {count(handled)} of {count(matched)} {matched === 1 ? 'run' : 'runs'}
            {finished ? ' handled' : ' found so far handled'}
          </p>
          <p role="status" aria-live="polite" class="bulk-result">
            {finished
              ? `Finished: ${count(action.done)} ${doneWords(action)}, ${count(skipped)} ${action.dryRun ? 'would be skipped. Nothing was changed' : 'skipped'}.`
              : 'Running on the workers…'}
          </p>
          <dl class="facts">
            <dt>Done</dt>
            <dd>
              {count(action.done)} {doneWords(action)}
            </dd>
            <dt>Skipped</dt>
            <dd>
              <SkippedList skipped={action.skipped} />
            </dd>
            {action.migration && (
              <>
                <dt>Move</dt>
                <dd>{planWords(action.migration)}</dd>
              </>
            )}
            <dt>Filter</dt>
            <dd>
              <KeyValues data={action.filter} label="Filter" />
            </dd>
            {action.reason && (
              <>
                <dt>Reason</dt>
                <dd>{action.reason}</dd>
              </>
            )}
            <dt>Started</dt>
            <dd>
              <Time value={action.startedAt} />
            </dd>
            <dt>Finished</dt>
            <dd>{action.finishedAt ? <Time value={action.finishedAt} /> : 'not yet'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{action.id}</code>
            </dd>
          </dl>
        </>
      )}
    </section>
  );
}
