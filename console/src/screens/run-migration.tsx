// A run moved onto another version of its template, from its page: the target version chosen
// among the template's others, the two versions' pages side by side with the page each becomes
// (by name unless chosen otherwise), a check (the API's dry run: nothing changes) telling in
// words what the move would do, then the move itself, confirmed. The API decides: a refusal
// shows under the page or field it names (the page the run is at, when it maps to none), or
// else on top.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { WorkflowRunDetail, WorkflowTemplateDetail } from 'workflow-run-client';
import {
  DropIncompatible,
  fieldNamer,
  mapShowsError,
  MigrationSummary,
  PageMapEditor,
  pageMapBody,
  useVersion,
  useVersions,
  VersionChoice,
} from '../migration.js';
import {
  ActionButton,
  confirmAction,
  ErrorBanner,
  fieldError,
  Loading,
  useConsole,
  type Loaded,
} from '../ui.js';
import type { Migration, PageMap } from '../vocabulary.js';

export function MigrateRun({
  run,
  from,
  canTemplates,
  onClose,
  onMoved,
}: {
  run: WorkflowRunDetail;
  /** The run's own version, with its pages (undefined without templates:read). */
  from: Loaded<WorkflowTemplateDetail | undefined>;
  canTemplates: boolean;
  onClose(): void;
  onMoved(migration: Migration): void;
}) {
  const { api } = useConsole();
  const versions = useVersions(canTemplates ? run.templateId : undefined);
  const others = (versions.data ?? []).filter((v) => v.version !== run.templateVersion);
  const [target, setTarget] = useState<number | undefined>(undefined);
  // The latest version is the usual target: chosen once the versions are known.
  useEffect(() => {
    if (target === undefined && others[0]) setTarget(others[0].version);
  }, [versions.data]);
  const to = useVersion(canTemplates ? run.templateId : undefined, target);
  const [chosen, setChosen] = useState<PageMap>({});
  const [drop, setDrop] = useState(false);
  const [checked, setChecked] = useState<Migration | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const fromPages = from.data?.pages;
  const toPages = to.data?.version === target ? to.data?.pages : undefined;
  const ready = target !== undefined && (!canTemplates || (fromPages && toPages));
  /** Any change of the plan makes an earlier check's answer stale. */
  const change = () => {
    setChecked(null);
    setError(null);
  };

  const pageMap = fromPages && toPages ? pageMapBody(fromPages, toPages, chosen) : undefined;
  const body = (dryRun: boolean) => ({
    workflow_run_id: run.id,
    to_version: target!,
    ...(pageMap ? { page_map: pageMap } : {}),
    ...(drop ? { drop_incompatible: true } : {}),
    ...(dryRun ? { dry_run: true } : {}),
  });

  const check = async () => {
    setBusy(true);
    setError(null);
    setChecked(null);
    try {
      const answer = await api.migrateWorkflowRun(body(true));
      setChecked(answer.migration);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const move = async () => {
    const dropped = Object.keys(checked?.droppedFields ?? {}).length;
    const answer = await confirmAction({
      title: `Move this run to version ${target}?`,
      body: (
        <p>
          <strong>{run.workflowName}</strong> moves at once from version {run.templateVersion} to
          version {target}; its history records the move.{' '}
          {checked
            ? `As checked, it will be at step ${checked.step ?? '(none yet)'}` +
              (dropped
                ? ` and ${dropped} ${dropped === 1 ? 'value is' : 'values are'} dropped.`
                : '.')
            : 'It was not checked: Check shows what the move would change.'}
        </p>
      ),
      confirm: 'Move run',
    });
    if (!answer) return;
    setBusy(true);
    setError(null);
    try {
      const moved = await api.migrateWorkflowRun(body(false));
      onMoved(moved.migration);
    } catch (e) {
      setError(e);
      setChecked(null);
    } finally {
      setBusy(false);
    }
  };

  const versionError = fieldError(error, '/to_version');
  const topError =
    versionError || mapShowsError(error, toPages ? fromPages : undefined) ? null : error;

  return (
    <section class="panel migrate-run" id="migrate-run" aria-labelledby="migrate-title">
      <div class="panel-head">
        <h2 id="migrate-title" ref={heading} tabIndex={-1}>
          Move to another version
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="muted">
        The run keeps what it has done: its steps follow their pages (by name, unless you choose
        otherwise), its values are carried by field id, and the step it is at takes its new page's
        due time. Check first: a check changes nothing.
      </p>
      <div class="migrate-versions">
        <p class="field">
          <span>From</span>
          version {run.templateVersion} (this run's)
        </p>
        <VersionChoice
          id="migrate-version"
          label="To version"
          value={target}
          versions={canTemplates ? versions.data : undefined}
          exclude={run.templateVersion}
          message={versionError}
          describedBy={canTemplates ? undefined : 'migrate-no-templates'}
          onChange={(version) => {
            setTarget(version);
            setChosen({});
            change();
          }}
        />
      </div>
      {!canTemplates && (
        <p class="muted" id="migrate-no-templates">
          This key does not hold <code>templates:read</code>, so the versions and their pages are
          not listed: give the version's number, and the pages map by name.
        </p>
      )}
      <ErrorBanner error={versions.error} title="The versions could not be read" />
      {versions.data && !others.length && (
        <p class="banner info">
          This template has no other version. Edit the template to save a new one.
        </p>
      )}
      <ErrorBanner error={from.error ?? to.error} title="The versions' pages could not be read" />
      {canTemplates && target !== undefined && !(fromPages && toPages) && !to.error && (
        <Loading what="the pages of both versions" />
      )}
      {from.data && to.data && fromPages && toPages && (
        <PageMapEditor
          idPrefix="migrate"
          from={from.data}
          to={to.data}
          chosen={chosen}
          current={run.currentStepName}
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
        target="new"
        instead="refusing the move"
        onChange={(checked) => {
          setDrop(checked);
          change();
        }}
      />
      <ErrorBanner error={topError} title="Refused" />
      {checked && (
        <section class="migrate-check" aria-labelledby="migrate-check-title">
          <h3 id="migrate-check-title">If moved now</h3>
          <p role="status">Checked: the run can move. Nothing was changed.</p>
          <MigrationSummary migration={checked} fieldName={fieldNamer(from.data, to.data)} would />
        </section>
      )}
      <div class="buttons">
        <ActionButton scope="runs:write" disabled={!ready || busy} onClick={() => void check()}>
          Check
        </ActionButton>
        <ActionButton
          scope="runs:write"
          class="primary"
          disabled={!ready || busy}
          onClick={() => void move()}
        >
          Move run
        </ActionButton>
      </div>
    </section>
  );
}
