// Bulk actions: pick the runs' filter (kept in the URL's query, as on the runs screen), see how
// many runs match it by status, then cancel or retry them all, or move those of one template
// from one of its versions to another (a dry run first counts the runs that would move). The
// action then runs on the workers; its progress is followed here (?action=<id> in the URL, so a
// reload or a shared link follows it too) until it completes, with the counts of runs done and
// skipped.
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  BulkAction,
  BulkCancelWorkflowRunsRequest,
  WorkflowRunClient,
  WorkflowRunCounts,
} from 'workflow-run-client';
import { isRefusal } from '../api.js';
import {
  mapShowsError,
  PageMapEditor,
  pageMapBody,
  useVersion,
  useVersions,
  VersionChoice,
} from '../migration.js';
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
  fieldError,
  Loading,
  type Loaded,
  ScreenHeader,
  StatusBadge,
  Time,
  useCan,
  useConsole,
  useLoad,
} from '../ui.js';
import {
  RUN_STATUSES,
  type BulkActionKind,
  type BulkMigration,
  type ErrorCode,
  type PageMap,
  type RunStatus,
} from '../vocabulary.js';
import { KeyValues } from './audit.js';

const NUMBER = new Intl.NumberFormat();
const count = (n: number) => NUMBER.format(n);

type BulkFilter = NonNullable<BulkCancelWorkflowRunsRequest['filter']>;

/** A bulk action's body's filter: the list's parameters, `overdue` as a boolean. */
function bulkFilter(filter: RunFilterValues): BulkFilter {
  const body: BulkFilter = {};
  if (filter.statuses.length) body.status = filter.statuses.join(',');
  if (filter.templateId) body.template_id = filter.templateId;
  if (filter.templateId && filter.templateVersion)
    body.template_version = Number(filter.templateVersion);
  if (filter.assignee) body.assignee = filter.assignee;
  if (filter.overdue) body.overdue = filter.overdue === 'true';
  if (filter.createdAfter) body.created_after = filter.createdAfter;
  if (filter.createdBefore) body.created_before = filter.createdBefore;
  if (filter.updatedAfter) body.updated_after = filter.updatedAfter;
  if (filter.updatedBefore) body.updated_before = filter.updatedBefore;
  if (filter.labels.length) body.label = filter.labels;
  return body;
}

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

/** What the runs an action changed were made, in words. */
const DONE: Record<BulkActionKind, string> = {
  cancel: 'cancelled',
  retry: 'retried',
  migrate: 'moved',
};

/** The runs an action changed (or, in a dry run, would change), in words: "3 moved". */
const doneWords = (action: BulkAction) => (action.dryRun ? 'would move' : DONE[action.action]);

/** The reasons runs are skipped, in words (the API's code beside them). */
const SKIPPED: Partial<Record<ErrorCode, string>> = {
  run_not_cancellable: 'had already ended',
  run_not_retryable: 'were not failed',
  run_not_migratable: 'had ended (only pending or active runs move)',
  migration_same_version: 'already used the target version',
  migration_step_unmapped: 'were at a step that maps to no page of the target version',
  migration_incompatible_value: "held a value the target version's field refuses",
  completion_pending: 'had a step completion waiting for a worker',
};

/** Skipped runs by code, in words: "1 had ended (…) (run_not_migratable)". */
function SkippedList({ skipped }: { skipped: Record<string, number> }) {
  const entries = Object.entries(skipped);
  if (entries.length === 0) return <>none</>;
  return (
    <ul class="plain">
      {entries.map(([code, n]) => (
        <li key={code}>
          {count(n)} {SKIPPED[code as ErrorCode] ?? 'were refused'} (<code>{code}</code>)
        </li>
      ))}
    </ul>
  );
}

/** A move's plan in words: its versions, its page map, whether it drops refused values. */
function planWords(plan: BulkMigration): string {
  const pages = Object.entries(plan.pageMap ?? {}).map(([from, to]) =>
    to === null ? `${from} left behind` : `${from} becomes ${to}`,
  );
  return [
    `from version ${plan.fromVersion} to version ${plan.toVersion}`,
    pages.length ? `pages: ${pages.join(', ')}` : 'pages by name',
    plan.dropIncompatible ? 'incompatible values dropped' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Actions started from this page, shown at once while their first progress is read. */
const started = new Map<string, BulkAction>();

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

/**
 * A bulk move of the matching runs of the filter's template from one of its versions to
 * another: the versions chosen (the filter's version, when it names one, is the one moved
 * from), the two versions' pages side by side with the page each becomes, then a dry run
 * (counted by the workers, changing nothing) and the move itself, confirmed and followed by the
 * progress bar as a cancel or retry is.
 */
function MigratePanel({
  filter,
  onClose,
  onStarted,
}: {
  filter: RunFilterValues;
  onClose(): void;
  onStarted(action: BulkAction): void;
}) {
  const { api } = useConsole();
  const canTemplates = useCan('templates:read');
  const templateId = filter.templateId;
  const versions = useVersions(canTemplates ? templateId : undefined);
  const fixedFrom = filter.templateVersion ? Number(filter.templateVersion) : undefined;
  const [fromVersion, setFromVersion] = useState<number | undefined>(fixedFrom);
  const [toVersion, setToVersion] = useState<number | undefined>(undefined);
  // The usual move: from the version before the latest (or the filter's) to the latest.
  useEffect(() => {
    const listed = (versions.data ?? []).map((v) => v.version).sort((a, b) => b - a);
    if (!listed.length) return;
    const from = fromVersion ?? listed.find((v) => v !== listed[0]);
    setFromVersion(from);
    setToVersion((to) => to ?? listed.find((v) => v !== from));
  }, [versions.data]);
  const from = useVersion(canTemplates ? templateId : undefined, fromVersion);
  const to = useVersion(canTemplates ? templateId : undefined, toVersion);
  const fromPages = from.data?.version === fromVersion ? from.data?.pages : undefined;
  const toPages = to.data?.version === toVersion ? to.data?.pages : undefined;
  const [chosen, setChosen] = useState<PageMap>({});
  const [drop, setDrop] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [dryRun, setDryRun] = useState<{ id: string; plan: string } | null>(null);
  const [dryResult, setDryResult] = useState<BulkAction | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const pageMap = fromPages && toPages ? pageMapBody(fromPages, toPages, chosen) : undefined;
  const body = (dry: boolean) => ({
    filter: bulkFilter(filter),
    from_version: fromVersion!,
    to_version: toVersion!,
    ...(pageMap ? { page_map: pageMap } : {}),
    ...(drop ? { drop_incompatible: true } : {}),
    ...(dry ? { dry_run: true } : {}),
  });
  const plan = JSON.stringify(body(false));
  const current = dryRun?.plan === plan ? dryRun : null;
  const chosenBoth =
    fromVersion !== undefined && toVersion !== undefined && fromVersion !== toVersion;
  const pagesLoading = canTemplates && chosenBoth && !(fromPages && toPages);
  const ready = chosenBoth && !pagesLoading;
  const change = () => setError(null);

  const runDry = async () => {
    setBusy(true);
    setError(null);
    setDryResult(null);
    try {
      const action = await api.bulkMigrateWorkflowRuns(body(true));
      started.set(action.id, action);
      setDryRun({ id: action.id, plan });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const move = async () => {
    const result = current && dryResult?.id === current.id ? dryResult : null;
    const skipped = result ? Object.values(result.skipped).reduce((a, b) => a + b, 0) : 0;
    const answer = await confirmAction({
      title: `Move the matching runs to version ${toVersion}?`,
      body: (
        <>
          <p>
            The pending and active runs of this template at version {fromVersion} that match this
            filter move to version {toVersion}, each as a single move would move it.{' '}
            {result ? (
              <>
                The dry run found <strong>{count(result.done)}</strong>{' '}
                {result.done === 1 ? 'run' : 'runs'} that would move and{' '}
                <strong>{count(skipped)}</strong> that would be skipped.
              </>
            ) : (
              'No dry run of this plan has finished: Dry run counts the runs that would move, changing nothing.'
            )}
          </p>
          <KeyValues data={bulkFilter(filter)} label="Filter" />
        </>
      ),
      confirm: 'Move runs',
    });
    if (!answer) return;
    setBusy(true);
    setError(null);
    try {
      onStarted(await api.bulkMigrateWorkflowRuns(body(false)));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const listed = canTemplates ? versions.data : undefined;
  const fromError = fieldError(error, '/from_version');
  const toError = fieldError(error, '/to_version');
  const topError =
    fromError || toError || mapShowsError(error, toPages ? fromPages : undefined) ? null : error;

  return (
    <section class="panel migrate-run" id="bulk-migrate" aria-labelledby="bulk-migrate-title">
      <div class="panel-head">
        <h2 id="bulk-migrate-title" ref={heading} tabIndex={-1}>
          Move to version
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="muted">
        The matching runs of the template at the version moved from move to the target version:
        their steps follow their pages (by name, unless you choose otherwise) and their values are
        carried by field id. A run that cannot move is skipped and counted with its reason. Make a
        dry run first: it counts, and changes nothing.
      </p>
      <div class="migrate-versions">
        <VersionChoice
          id="bulk-migrate-from"
          label="From version"
          value={fromVersion}
          versions={listed}
          message={fromError}
          describedBy={fixedFrom !== undefined ? 'bulk-migrate-fixed' : undefined}
          disabled={fixedFrom !== undefined}
          onChange={(version) => {
            setFromVersion(version);
            setChosen({});
            change();
          }}
        />
        <VersionChoice
          id="bulk-migrate-to"
          label="To version"
          value={toVersion}
          versions={listed}
          exclude={fromVersion}
          message={toError}
          onChange={(version) => {
            setToVersion(version);
            setChosen({});
            change();
          }}
        />
      </div>
      {fixedFrom !== undefined && (
        <p class="muted" id="bulk-migrate-fixed">
          The filter names version {fixedFrom}: the runs move from it.
        </p>
      )}
      {!canTemplates && (
        <p class="muted">
          This key does not hold <code>templates:read</code>, so the versions and their pages are
          not listed: give the versions' numbers, and the pages map by name.
        </p>
      )}
      <ErrorBanner error={versions.error} title="The versions could not be read" />
      {versions.data && versions.data.length < 2 && canTemplates && (
        <p class="banner info">
          This template has one version only: there is no other to move its runs to.
        </p>
      )}
      <ErrorBanner error={from.error ?? to.error} title="The versions' pages could not be read" />
      {pagesLoading && !from.error && !to.error && <Loading what="the pages of both versions" />}
      {from.data && to.data && fromPages && toPages && (
        <PageMapEditor
          idPrefix="bulk-migrate"
          from={from.data}
          to={to.data}
          chosen={chosen}
          error={error}
          disabled={busy}
          onChoose={(page, value) => {
            setChosen((c) => ({ ...c, [page]: value }));
            change();
          }}
        />
      )}
      <label class="check migrate-drop">
        <input
          type="checkbox"
          checked={drop}
          onChange={(event) => {
            setDrop(event.currentTarget.checked);
            change();
          }}
        />{' '}
        Drop incompatible values: a value the target version's field refuses is dropped (and kept in
        the run's history) rather than the run skipped
      </label>
      <ErrorBanner error={topError} title="Refused" />
      {current && <DryRun key={current.id} id={current.id} onFinished={setDryResult} />}
      <div class="buttons">
        <ActionButton scope="runs:write" disabled={!ready || busy} onClick={() => void runDry()}>
          Dry run
        </ActionButton>
        <ActionButton
          scope="runs:write"
          class="primary"
          disabled={!ready || busy}
          onClick={() => void move()}
        >
          Move runs
        </ActionButton>
      </div>
    </section>
  );
}

/** A dry run's counts, read until it has finished: the runs that would move, and those skipped. */
function DryRun({ id, onFinished }: { id: string; onFinished(action: BulkAction): void }) {
  const { action, error } = useBulkAction(id);
  const finished = action?.status === 'completed';
  useEffect(() => {
    if (finished && action) onFinished(action);
  }, [finished]);
  const skipped = action ? Object.values(action.skipped).reduce((a, b) => a + b, 0) : 0;
  return (
    <section class="migrate-check" aria-labelledby="bulk-dry-title">
      <h3 id="bulk-dry-title">Dry run</h3>
      <ErrorBanner error={error} title="The dry run could not be read (trying again)" />
      {action && (
        <>
          <p role="status" aria-live="polite" class="bulk-dry-result">
            {finished
              ? `Dry run finished: ${count(action.done)} ${action.done === 1 ? 'run' : 'runs'} would move, ${count(skipped)} would be skipped. Nothing was changed.`
              : `Counting… ${count(action.done + skipped)} of ${count(action.matched)} runs found so far.`}
          </p>
          <dl class="facts">
            <dt>Would move</dt>
            <dd>{count(action.done)}</dd>
            <dt>Would be skipped</dt>
            <dd>
              <SkippedList skipped={action.skipped} />
            </dd>
          </dl>
        </>
      )}
      {!action && !error && <Loading what="the dry run" />}
    </section>
  );
}

/** Reads a bulk action about every 500 ms until it has completed. */
function useBulkAction(id: string): { action?: BulkAction; error?: unknown } {
  const { api } = useConsole();
  const [state, setState] = useState<{ action?: BulkAction; error?: unknown }>(() => ({
    action: started.get(id),
  }));
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const action = await api.getBulkAction({ id });
        if (stopped) return;
        setState({ action });
        if (action.status !== 'completed') timer = setTimeout(() => void poll(), 500);
        else started.delete(id);
      } catch (error) {
        if (stopped) return;
        setState((s) => ({ ...s, error }));
        // A refusal (not found, no scope) is final; a lost connection or a 5xx is tried again.
        if (!isRefusal(error)) timer = setTimeout(() => void poll(), 2000);
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, api]);
  return state;
}

/** A bulk action's title: "Bulk cancel", "Bulk move to version 3", "Dry run: move to version 3". */
function titleOf(action: BulkAction): string {
  if (!action.migration) return `Bulk ${action.action}`;
  const to = `move to version ${action.migration.toVersion}`;
  return action.dryRun ? `Dry run: ${to}` : `Bulk ${to}`;
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
