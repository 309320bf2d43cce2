// The bulk move: the matching runs of the filter's template moved from one of its versions to
// another, a dry run first (screens/bulk.tsx opens it, and follows the move's progress).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BulkAction } from 'workflow-run-client';
import { bulkFilter, count, SkippedList, started, useBulkAction } from '../bulk-actions.js';
import {
  DropIncompatible,
  mapShowsError,
  PageMapEditor,
  pageMapBody,
  useVersion,
  useVersions,
  VersionChoice,
} from '../migration.js';
import type { RunFilterValues } from '../run-filters.js';
import {
  ActionButton,
  confirmAction,
  ErrorBanner,
  fieldError,
  Loading,
  useCan,
  useConsole,
} from '../ui.js';
import type { PageMap } from '../vocabulary.js';
import { KeyValues } from './audit.js';
/**
 * A bulk move of the matching runs of the filter's template from one of its versions to
 * another: the versions chosen (the filter's version, when it names one, is the one moved
 * from), the two versions' pages side by side with the page each becomes, then a dry run
 * (counted by the workers, changing nothing) and the move itself, confirmed and followed by the
 * progress bar as a cancel or retry is.
 */
export function MigratePanel({
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
      <DropIncompatible
        checked={drop}
        target="target"
        instead="the run skipped"
        onChange={(checked) => {
          setDrop(checked);
          change();
        }}
      />
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
